package dev.fleproxy.rewrite.read;

import com.ibm.icu.text.Collator;
import dev.fleproxy.rewrite.evaluate.CandidateWindow;
import dev.fleproxy.rewrite.evaluate.DistinctValues;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.evaluate.DocumentProjection;
import dev.fleproxy.rewrite.evaluate.DocumentSort;
import dev.fleproxy.rewrite.evaluate.PipelineEvaluator;
import dev.fleproxy.rewrite.evaluate.StringOrder;
import dev.fleproxy.rewrite.paths.ReadShape;
import dev.fleproxy.wire.Frame;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * One find or count the proxy evaluates itself, from its request to its answer: what the proxy
 * applies to the decrypted candidates (residual filter, sort, skip, limit, projection), the
 * candidates read so far, and the read of the next batch while it is under way. Used on the
 * connection's event loop, or on the evaluation pool while the loop waits for its step ({@link
 * #work}): never on both at once.
 */
final class EvaluatedQuery {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    /**
     * What the client asked for, the proxy's part of it; strings compare under the collator (null:
     * by bytes, the simple collation), frozen so that the loop and the pool may both use it.
     */
    record Steps(DocumentFilter residual, DocumentSort sort, Window window, DocumentProjection projection,
                 Answer answer, Collator collator) {
    }

    /** skip and limit (0: none). */
    record Window(long skip, long limit) {
    }

    /** What is answered: the documents (find), their number (count), or a key's distinct values. */
    record Answer(boolean count, DistinctValues distinct, PipelineEvaluator pipeline) {
        static final Answer DOCUMENTS = new Answer(false, null, null);
        static final Answer COUNT = new Answer(true, null, null);
    }

    /**
     * How the documents of the answer are batched: the client's batchSize for the first batch (-1:
     * all that fit), and whether it asked for one batch only (find's singleBatch).
     */
    record FirstBatch(int size, boolean single) {
        static final FirstBatch ALL = new FirstBatch(-1, false);
    }

    final ReadShape shape;
    final Steps steps;
    final FirstBatch firstBatch;
    /** Documents the proxy may examine (maxScanDocuments); one more read means refusal. */
    final int budget;
    /**
     * Bytes of candidates one query may hold: with the document budget alone, 10,000 documents of
     * up to 16 MiB each could be held at once. Past it the query is refused like one over budget.
     */
    static final long MAX_CANDIDATE_BYTES = 64L * 1024 * 1024;
    private long bytes;
    /** The largest candidate read so far, in bytes: the next batch is sized by it. */
    private long largest;
    /** How many candidates the last read asked for: a batch grows at most {@link #GROWTH} times the one before. */
    private int lastAsked = FIRST_BATCH;
    /**
     * Candidates asked for by the first read (as mongod's first batch): the server returns at most
     * that many until the proxy knows how large they are. The embedded backend does not cut a
     * batch at 16 MiB as mongod does: 10,001 documents of 5 KB came back as one 50.9 MB message.
     */
    static final int FIRST_BATCH = 101;
    static final int GROWTH = 8;
    /**
     * Bytes a candidate batch is sized for: a quarter of a reply, since documents vary, and since
     * every query waiting for the evaluation pool holds its batch (and its decrypted copy) meanwhile.
     */
    static final int BATCH_TARGET = 1024 * 1024;
    /** The proxy-wide memory this query holds (null until its first reply); given back by {@link #end}. */
    EvaluationMemory.Lease lease;
    /** True if the last {@link #take} was refused by the proxy-wide budget rather than this query's own. */
    boolean overMemory;
    /** The writes of an aggregate's $out or $merge, once its output is known; null for any other query. */
    OutputWrites output;
    /** The step running on the evaluation pool while the reply lane waits for it. */
    java.util.concurrent.CompletableFuture<Object> work;
    /** getMore's part of the request: $db, collection, and the session fields (lsid, txnNumber, autocommit). */
    private final BsonDocument getMoreTemplate;
    private final List<BsonDocument> candidates = new ArrayList<>();
    /**
     * The bytes each candidate was read as, by its decoded document, when the answer returns
     * candidates as they are (a find without projection): answered without encoding them again.
     */
    private final Map<BsonDocument, RawBsonDocument> asRead = new IdentityHashMap<>();
    /** The read of the next batch under way, and its reply once it came (owned until read). */
    CompletionStage<Frame> call;
    Frame batch;
    long cursorId;

    /** The command that asked (find, aggregate, count, distinct): the metrics' label for a refusal of its answer. */
    final String command;

    EvaluatedQuery(String command, ReadShape shape, Steps steps, FirstBatch firstBatch, int budget,
                   BsonDocument getMoreTemplate) {
        this.command = command;
        this.shape = shape;
        this.steps = steps;
        this.firstBatch = firstBatch;
        this.budget = budget;
        this.getMoreTemplate = getMoreTemplate;
    }

    String ns() {
        return shape.policy.namespace();
    }

    /**
     * Takes a decrypted batch of {@code size} bytes; true while the candidates are within the
     * budget, this query's and the proxy's ({@link EvaluationMemory}).
     */
    boolean take(BsonArray documents, long nextCursorId, long size) {
        cursorId = nextCursorId;
        bytes += size;
        if (bytes > MAX_CANDIDATE_BYTES || documents.size() + candidates.size() > budget) {
            return false;
        }
        if (lease != null && !lease.grow(size * EvaluationMemory.DECODED_COST)) {
            overMemory = true;
            return false;
        }
        if (lease != null && nextCursorId != 0 && candidates.isEmpty() && !documents.isEmpty()
                && !lease.reserve(likelyTotal(size, documents.size()))) {
            overMemory = true; // more batches to come: what they will likely take is taken now, or the query refused
            return false;
        }
        for (BsonValue d : documents) {
            if (d instanceof RawBsonDocument raw) {
                largest = Math.max(largest, raw.getByteBuffer().remaining());
            }
            // decoded once: a raw document decodes again on every get, and each is read many times
            BsonDocument decoded = d instanceof RawBsonDocument raw ? raw.decode(CODEC) : d.asDocument();
            candidates.add(decoded);
            if (d instanceof RawBsonDocument raw && answersAsRead()) {
                asRead.put(decoded, raw);
            }
        }
        return true;
    }

    /** Bytes of candidates read so far (as the replies held them). */
    long bytes() {
        return bytes;
    }

    int examined() {
        return candidates.size();
    }

    /** The session the query ran in (null: none), to which a cursor the proxy holds for it is bound. */
    BsonValue lsid() {
        return getMoreTemplate.get("lsid");
    }

    /**
     * The getMore for the next batch: as many as the budget still allows and one more, but no more
     * than the largest candidate so far says fit in {@link #BATCH_TARGET}, nor {@link
     * #GROWTH} times the last batch (the first ones may have been the small ones).
     */
    BsonDocument getMore() {
        BsonDocument g = new BsonDocument("getMore", new BsonInt64(cursorId));
        g.putAll(getMoreTemplate);
        long fit = Math.max(1, BATCH_TARGET / Math.max(1, largest));
        int asked = (int) Math.max(1, Math.min(Math.min(budget + 1L - candidates.size(), fit), (long) lastAsked * GROWTH));
        lastAsked = asked;
        g.put("batchSize", new BsonInt32(asked));
        return g;
    }

    /**
     * What the whole candidate set will likely cost, from the first batch: as many candidates as
     * the scan budget allows, of the first ones' size, within this query's byte cap, and no more
     * than a quarter of the proxy-wide budget (the server's part of the filter may select far
     * fewer: past the reservation a query still grows batch by batch).
     */
    private long likelyTotal(long firstBytes, int firstDocuments) {
        long perDocument = Math.max(1, firstBytes / firstDocuments);
        return Math.min(Math.min(MAX_CANDIDATE_BYTES, perDocument * (budget + 1L)) * EvaluationMemory.DECODED_COST,
                lease.budget() / 4);
    }

    /** The batchSize of the first candidate read. */
    static int firstBatch(int budget) {
        return Math.min(budget + 1, FIRST_BATCH);
    }

    BsonDocument killCursor() {
        BsonDocument k = new BsonDocument("killCursors", getMoreTemplate.get("collection"));
        k.put("cursors", new BsonArray(List.of(new BsonInt64(cursorId))));
        getMoreTemplate.forEach((name, v) -> {
            if (!name.equals("collection")) {
                k.put(name, v);
            }
        });
        return k;
    }

    /** The documents of a find's or an aggregate's answer, in order; null if the answer is a count or distinct values. */
    List<BsonDocument> documents(FieldMasks masks) {
        if (steps.answer().count() || steps.answer().distinct() != null) {
            return null;
        }
        return StringOrder.under(steps.collator(), () -> collated(masks)); // strings compared under the query's collation
    }

    private List<BsonDocument> collated(FieldMasks masks) {
        List<BsonDocument> matched = masked(matched(), masks);
        List<BsonDocument> out;
        if (steps.answer().pipeline() != null) {
            out = steps.answer().pipeline().run(matched);
        } else {
            List<BsonDocument> window = CandidateWindow.apply(matched, steps.window().skip(), steps.window().limit());
            out = new ArrayList<>(window.size());
            for (BsonDocument d : window) {
                BsonDocument read = asRead.get(d);
                out.add(steps.projection() != null ? steps.projection().apply(d) : read != null ? read : d);
            }
        }
        if (masks.any()) {
            masks.refuseDenied(out);
        }
        return out;
    }

    /**
     * The matched candidates as the connection's identity may see them: its filter and sort ran on
     * the plaintext (the query rule let it), everything after runs on the masked documents.
     */
    private static List<BsonDocument> masked(List<BsonDocument> matched, FieldMasks masks) {
        if (!masks.any()) {
            return matched;
        }
        List<BsonDocument> out = new ArrayList<>(matched.size());
        for (BsonDocument d : matched) {
            out.add(masks.applyTo(d));
        }
        return out;
    }

    /** True if the answer is candidates as they were read: a find without projection. */
    private boolean answersAsRead() {
        return steps.projection() == null && !steps.answer().count() && steps.answer().distinct() == null
                && steps.answer().pipeline() == null;
    }

    /** The answer of a count or a distinct, as the server would have given it on plaintext. */
    BsonDocument answer(FieldMasks masks) {
        return StringOrder.under(steps.collator(), () -> collatedAnswer(masks));
    }

    private BsonDocument collatedAnswer(FieldMasks masks) {
        List<BsonDocument> matched = matched();
        if (steps.answer().distinct() != null) {
            BsonArray values = new BsonArray(steps.answer().distinct().of(masked(matched, masks)));
            if (masks.any()) {
                masks.refuseDenied(values);
            }
            return new BsonDocument("values", values).append("ok", new BsonInt32(1));
        }
        List<BsonDocument> window = CandidateWindow.apply(matched, steps.window().skip(), steps.window().limit());
        return new BsonDocument("n", new BsonInt32(window.size())).append("ok", new BsonInt32(1));
    }

    /** The candidates the residual filter matches, sorted if the query sorts. */
    private List<BsonDocument> matched() {
        List<BsonDocument> matched = new ArrayList<>();
        for (BsonDocument d : candidates) {
            if (steps.residual() == null || steps.residual().matches(d)) {
                matched.add(d);
            }
        }
        if (steps.sort() != null) {
            matched = steps.sort().sort(matched); // each document's sort key computed once
        }
        return matched;
    }

    /** Frees a batch that was read but not yet taken (the connection closed, or an error ended the query). */
    void releaseBatch() {
        if (batch != null) {
            batch.release();
            batch = null;
        }
    }

    /**
     * The query is answered, refused, or its connection closed: the batch not taken and the
     * proxy-wide memory go back (the candidates themselves with this object). On the loop.
     */
    void end() {
        releaseBatch();
        if (lease != null) {
            lease.end();
        }
    }
}
