package dev.fleproxy.rewrap;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * One batch of a run: every document planned, and the ones that change written as one unordered
 * bulk write of conditional updates ({@code _id} plus {@code $eq} on each replaced field), so a
 * batch costs one round trip rather than one per document. When fewer updates matched than were
 * sent, the application changed (or deleted) some documents since they were read: the batch's
 * documents are read again by _id; one that holds the values this run wrote was written, one that
 * holds something else is planned afresh from what it holds now (up to {@link #MAX_ATTEMPTS}
 * times, then it is left, contended), and one that is gone is counted gone. No application write
 * is ever overwritten, and a bulk write retried after a lost reply is recognised the same way.
 */
final class BatchRewrap {
    /** How many times a document changed by the application is read and planned again. */
    static final int MAX_ATTEMPTS = 5;

    private static final BulkWriteOptions UNORDERED = new BulkWriteOptions().ordered(false);

    /** A document's planned update: its fields' categories, and the values written. */
    private record Write(BsonValue id, List<DocumentRewrap.Field> plan, BsonDocument match, BsonDocument set) {
        List<Category> categories() {
            return plan.stream().map(DocumentRewrap.Field::category).toList();
        }

        /** Whether the document holds what this write wrote (an envelope's nonce makes that unique). */
        boolean landedIn(BsonDocument doc) {
            for (DocumentRewrap.Field f : plan) {
                if (f.replacement() != null && !f.replacement().equals(DocumentRewrap.at(doc, f.path()))) {
                    return false;
                }
            }
            return true;
        }
    }

    private final MongoCollection<BsonDocument> collection;
    private final boolean dryRun;
    private final Retry retry;
    private final PrintStream err;

    BatchRewrap(MongoCollection<BsonDocument> collection, boolean dryRun, Retry retry, PrintStream err) {
        this.collection = collection;
        this.dryRun = dryRun;
        this.retry = retry;
        this.err = err;
    }

    /** Rewrites the documents (read in _id order) with these ciphers; what was done, counted. */
    Counts run(List<BsonDocument> docs, DocumentRewrap ciphers) {
        Counts counts = new Counts();
        counts.examined = docs.size();
        List<BsonDocument> pending = docs;
        for (int attempt = 1; attempt <= MAX_ATTEMPTS && !pending.isEmpty(); attempt++) {
            List<Write> writes = new ArrayList<>();
            for (BsonDocument doc : pending) {
                Write w = plan(doc, ciphers);
                if (w.set.isEmpty() || dryRun) {
                    counts.document(w.id, w.categories());
                    counts.rewritten += w.set.isEmpty() ? 0 : 1; // a dry run's: would be
                } else {
                    writes.add(w);
                }
            }
            pending = writes.isEmpty() ? List.of() : write(writes, counts);
        }
        for (BsonDocument doc : pending) {
            err.println("rewrap: _id " + doc.get("_id") + " changed at each of " + MAX_ATTEMPTS
                    + " attempts; left for another run");
            counts.document(doc.get("_id"), List.of(Category.CONTENDED));
        }
        return counts;
    }

    private static Write plan(BsonDocument doc, DocumentRewrap ciphers) {
        BsonValue id = doc.get("_id");
        List<DocumentRewrap.Field> plan = ciphers.plan(doc);
        BsonDocument match = new BsonDocument("_id", id);
        BsonDocument set = new BsonDocument();
        for (DocumentRewrap.Field f : plan) {
            if (f.replacement() != null) {
                match.append(f.path(), new BsonDocument("$eq", f.old()));
                set.append(f.path(), f.replacement());
            }
        }
        for (DocumentRewrap.Field f : plan) {
            // tags are made from the field's value: it too must be as it was read
            if (f.category() == Category.TAGS) {
                String source = f.path().substring(dev.fleproxy.rewrite.search.SearchTags.FIELD.length() + 1);
                if (!match.containsKey(source)) {
                    BsonValue v = DocumentRewrap.at(doc, source);
                    match.append(source, v == null ? new BsonDocument("$exists", org.bson.BsonBoolean.FALSE)
                            : new BsonDocument("$eq", v));
                }
            }
        }
        return new Write(id, plan, match, set);
    }

    /** Writes the updates; counts the documents done and returns the ones changed since they were read. */
    private List<BsonDocument> write(List<Write> writes, Counts counts) {
        List<WriteModel<BsonDocument>> models = new ArrayList<>(writes.size());
        for (Write w : writes) {
            models.add(new UpdateOneModel<>(w.match, new BsonDocument("$set", w.set)));
        }
        BulkWriteResult r = retry.run("rewriting documents", () -> collection.bulkWrite(models, UNORDERED));
        if (r.getMatchedCount() == writes.size()) {
            for (Write w : writes) {
                counts.document(w.id, w.categories());
                counts.rewritten++;
            }
            return List.of();
        }
        // some matched nothing: read the batch's documents again to see which
        BsonArray ids = new BsonArray(writes.stream().map(Write::id).toList());
        Map<BsonValue, BsonDocument> now = new HashMap<>();
        retry.run("reading documents again", () -> collection.find(new BsonDocument("_id", new BsonDocument("$in", ids)))
                .into(new ArrayList<>())).forEach(d -> now.put(d.get("_id"), d));
        List<BsonDocument> changed = new ArrayList<>();
        for (Write w : writes) {
            BsonDocument doc = now.get(w.id);
            if (doc == null) {
                counts.document(w.id, List.of(Category.GONE));
            } else if (w.landedIn(doc)) {
                counts.document(w.id, w.categories());
                counts.rewritten++;
            } else {
                changed.add(doc);
            }
        }
        return changed;
    }
}
