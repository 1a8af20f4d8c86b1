package dev.fleproxy.rewrap;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.result.UpdateResult;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.policy.CollectionPolicy;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Re-encrypts a live collection in place (issue 16): documents in _id order, a batch at a time,
 * each policy field that is not a current envelope rewritten (see {@link DocumentRewrap}), except
 * values the proxy did not write and may not adopt (issue 26, {@link Adoption}): those are left,
 * counted, and their documents listed by _id. Each
 * document is updated only if its fields still hold exactly what was read ({@code _id} plus
 * {@code $eq} on each replaced field): a concurrent application write makes the update match
 * nothing, and the document is read again and planned afresh, so no application write is ever
 * overwritten. After each batch the checkpoint ({@code fle_proxy.rewrap_state}: the last _id done,
 * the counts and the listed _ids) is saved, so a stopped run resumes there. The KMS and the upstream are retried
 * with backoff for up to {@code retrySeconds}; then the run stops with its checkpoint.
 */
public final class Rewrap {
    /** How many times a document changed by the application is read and planned again. */
    static final int MAX_ATTEMPTS = 5;

    /** @param rate documents per second at most (0: no limit) */
    public record Options(int batch, double rate, boolean dryRun, boolean resume, double retrySeconds) {
    }

    /** Stopped before the end: the KMS or the upstream did not come back in time. The checkpoint is saved. */
    public static final class Stopped extends RuntimeException {
        Stopped(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The outcome: counts over the whole collection (resumed runs included) and this run's time;
     * skipped fields in leftDocuments documents, and the listed categories' documents by _id, one
     * line per category (bounded: see {@link Listed}).
     */
    public record Result(long examined, long rewritten, String fields, long skipped, long leftDocuments,
                         List<String> listing, double seconds) {
    }

    private final MongoCollection<BsonDocument> collection;
    private final MongoCollection<BsonDocument> state;
    private final CollectionPolicy policy;
    private final Supplier<DocumentRewrap> keys;
    private final Options options;
    private final PrintStream err;
    private final boolean terminal;

    /**
     * @param keys the current ciphers; called once per batch (the key resolver's cache keeps it
     *             cheap), so a key refreshed, revoked or unreachable is seen within a batch
     */
    public Rewrap(MongoCollection<BsonDocument> collection, MongoCollection<BsonDocument> state, CollectionPolicy policy,
                  Supplier<DocumentRewrap> keys, Options options, PrintStream err, boolean terminal) {
        this.collection = collection;
        this.state = state;
        this.policy = policy;
        this.keys = keys;
        this.options = options;
        this.err = err;
        this.terminal = terminal;
    }

    public Result run() {
        long t0 = System.nanoTime();
        Counts counts = new Counts();
        BsonValue last = null;
        if (options.resume()) {
            BsonDocument saved = retrying("reading the checkpoint", () -> state.find(new BsonDocument("_id",
                    new BsonString(policy.namespace()))).first());
            if (saved == null || saved.getBoolean("finished", BsonBoolean.FALSE).getValue()) {
                throw new IllegalStateException(saved == null ? "nothing to resume: no checkpoint for "
                        + policy.namespace() + " in fle_proxy.rewrap_state" : "nothing to resume: the run on "
                        + policy.namespace() + " finished at " + Instant.ofEpochMilli(saved.getDateTime("updatedAt")
                        .getValue()) + "; run without --resume to check the collection again");
            }
            counts = Counts.fromBson(saved.getDocument("counts"));
            last = saved.get("lastId");
            if (!saved.getString("key").getValue().equals(policy.keyId().toString())) {
                err.println("rewrap: the checkpoint was made for key " + saved.getString("key").getValue()
                        + ", the policy's key is now " + policy.keyId() + ": documents before the checkpoint are not "
                        + "checked again; run without --resume to check them all");
            }
            err.println("rewrap: resuming " + policy.namespace() + (last == null ? " from the start" : " after _id " + last)
                    + " ("
                    + String.format(Locale.ROOT, "%,d", counts.examined) + " documents done)");
        }
        long total = retrying("counting documents", collection::estimatedDocumentCount);
        Progress progress = new Progress(err, terminal, "rewrap " + policy.namespace()
                + (options.dryRun() ? " (dry run)" : ""), total, counts.examined);
        Pace pace = new Pace(options.rate());
        while (true) {
            BsonDocument filter = last == null ? new BsonDocument() : new BsonDocument("_id", new BsonDocument("$gt", last));
            List<BsonDocument> batch = retrying("reading documents", () -> collection.find(filter)
                    .sort(new BsonDocument("_id", new BsonInt32(1))).limit(options.batch()).into(new ArrayList<>()));
            if (batch.isEmpty()) {
                break;
            }
            DocumentRewrap ciphers = retrying("getting the keys", keys::get);
            for (BsonDocument doc : batch) {
                rewriteOne(doc, ciphers, counts);
                pace.one();
                progress.update(counts.examined);
            }
            last = batch.get(batch.size() - 1).get("_id");
            save(counts, last, false);
        }
        save(counts, last, true);
        progress.finish(counts.examined);
        return new Result(counts.examined, counts.rewritten, counts.describe(), counts.skipped(), counts.leftDocuments,
                counts.listing(), (System.nanoTime() - t0) / 1e9);
    }

    private void rewriteOne(BsonDocument doc, DocumentRewrap ciphers, Counts counts) {
        counts.examined++;
        BsonValue id = doc.get("_id");
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            List<DocumentRewrap.Field> plan = ciphers.plan(doc);
            BsonDocument match = new BsonDocument("_id", id);
            BsonDocument set = new BsonDocument();
            for (DocumentRewrap.Field f : plan) {
                if (f.replacement() != null) {
                    match.append(f.path(), new BsonDocument("$eq", f.old()));
                    set.append(f.path(), f.replacement());
                }
            }
            List<Category> found = plan.stream().map(DocumentRewrap.Field::category).toList();
            if (set.isEmpty() || options.dryRun()) {
                counts.document(id, found);
                if (!set.isEmpty()) {
                    counts.rewritten++; // would be
                }
                return;
            }
            UpdateResult r = retrying("rewriting a document", () -> collection.updateOne(match,
                    new BsonDocument("$set", set)));
            if (r.getMatchedCount() == 1) {
                counts.document(id, found);
                counts.rewritten++;
                return;
            }
            // the application changed (or deleted) it since it was read: read it again
            BsonDocument again = retrying("reading a document again", () -> collection.find(
                    new BsonDocument("_id", id)).first());
            if (again == null) {
                counts.document(id, List.of(Category.GONE));
                return;
            }
            doc = again;
        }
        err.println("rewrap: _id " + id + " changed at each of " + MAX_ATTEMPTS + " attempts; left for another run");
        counts.document(id, List.of(Category.CONTENDED));
    }

    private void save(Counts counts, BsonValue last, boolean finished) {
        if (options.dryRun()) {
            return;
        }
        BsonDocument doc = new BsonDocument("_id", new BsonString(policy.namespace()))
                .append("key", new BsonString(policy.keyId().toString()))
                .append("counts", counts.toBson())
                .append("finished", BsonBoolean.valueOf(finished))
                .append("updatedAt", new BsonDateTime(System.currentTimeMillis()));
        if (last != null) {
            doc.append("lastId", last);
        }
        retrying("saving the checkpoint", () -> state.replaceOne(new BsonDocument("_id", doc.get("_id")), doc,
                new ReplaceOptions().upsert(true)));
    }

    /**
     * Runs an action, retrying while the upstream or the KMS is unavailable (backoff 0.5 s doubling
     * to 8 s) for up to retrySeconds; then stops the run. Definitive key problems (revoked, unknown)
     * stop it at once.
     */
    private <T> T retrying(String what, Supplier<T> action) {
        long deadline = System.nanoTime() + (long) (options.retrySeconds() * 1e9);
        long backoffMs = 500;
        while (true) {
            try {
                return action.get();
            } catch (MongoException | KeyAccessException e) {
                boolean definitive = e instanceof KeyAccessException k && k.isDefinitive();
                if (definitive || System.nanoTime() + backoffMs * 1_000_000 > deadline) {
                    throw new Stopped(what + " failed" + (definitive ? "" : " for " + options.retrySeconds() + " s")
                            + ": " + e.getMessage(), e);
                }
                err.println("rewrap: " + what + " failed (" + e.getMessage() + "); pausing, retry in "
                        + backoffMs / 1000.0 + " s");
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new Stopped("interrupted", ie);
                }
                backoffMs = Math.min(8000, backoffMs * 2);
            }
        }
    }

    /** Holds the run to at most rate documents per second. */
    private static final class Pace {
        private final double rate;
        private final long start = System.nanoTime();
        private long done;

        Pace(double rate) {
            this.rate = rate;
        }

        void one() {
            done++;
            if (rate <= 0) {
                return;
            }
            long due = start + (long) (done / rate * 1e9);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
