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
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.bson.BSONException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * One find or count the proxy evaluates itself, from its request to its answer: what the proxy
 * applies to the decrypted candidates (residual filter, sort, skip, limit, projection), the
 * candidates read so far, and the read of the next batch while it is under way. Used on the
 * connection's event loop, or on the evaluation pool while the loop waits for its step ({@link
 * #work}): never on both at once.
 */
final class EvaluatedQuery {
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
     * Bytes a candidate batch is sized for: above what an event loop evaluates itself ({@link
     * EvaluationPool#ON_LOOP_BYTES}), so a full batch goes to the pool; under half of G1's smallest
     * region (1 MiB), so that its copies (the body, decrypted) are not humongous objects, each of
     * which made G1 start a concurrent cycle (with 1 MiB batches, 5,800 in one run of
     * bench-starvation); and small since every query waiting for the pool holds its batch meanwhile.
     */
    static final int BATCH_TARGET = 384 * 1024;
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
    /** The candidates examined so far, and the matches of them the answer can use. */
    private final MatchedCandidates matches;
    /** The read of the next batch under way, and its reply once it came (owned until read). */
    CompletionStage<Frame> call;
    Frame batch;
    long cursorId;

    /** The command that asked (find, aggregate, count, distinct): the metrics' label for a refusal of its answer. */
    final String command;
    /** A sort by a range-indexed field walked from one end of its grid, or null (see {@link #walkDone}). */
    private dev.fleproxy.rewrite.search.RangeWalk walk;
    /** The walk's candidate find (the client's arguments, limit and batchSize) and its filter before the walk's part. */
    private BsonDocument walkRead;
    private BsonDocument walkFilter;
    /** The walk's field alone, in its direction: whether the last of the best sorts before the boundary. */
    private DocumentSort walkKey;

    EvaluatedQuery(String command, ReadShape shape, Steps steps, FirstBatch firstBatch, int budget,
                   BsonDocument getMoreTemplate) {
        this.command = command;
        this.shape = shape;
        this.steps = steps;
        this.firstBatch = firstBatch;
        this.budget = budget;
        this.getMoreTemplate = getMoreTemplate;
        // a find's window bounds the matches kept; a pipeline's or a distinct's answer needs them all
        boolean find = steps.answer().pipeline() == null && steps.answer().distinct() == null;
        this.matches = new MatchedCandidates(steps.residual(), steps.sort(), steps.answer().count(),
                find ? steps.window() : null, answersAsRead());
    }

    String ns() {
        return shape.policy.namespace();
    }

    /** Reads the candidates by this walk: {@code read} is the first find, whose filter is the query's and the walk's first part. */
    void walk(dev.fleproxy.rewrite.search.RangeWalk w, BsonDocument read, BsonDocument filter) {
        walk = w;
        walkRead = read;
        walkFilter = filter;
        walkKey = DocumentSort.compile(new BsonDocument(w.field(), new BsonInt32(w.descending() ? -1 : 1)));
    }

    /**
     * True unless a walk has more to read: the best skip + limit read so far are certain once the
     * last of them sorts before every document not read yet (ascending, below the boundary;
     * descending, at or above it), or when the grid has been read to its end.
     */
    boolean walkDone() {
        if (walk == null || walk.done()) {
            return true;
        }
        BsonDocument last = matches.lastOfTheBest();
        if (last == null) {
            return false;
        }
        int c = walkKey.comparator().compare(last, walk.boundary());
        return walk.descending() ? c <= 0 : c < 0;
    }

    /** The walk's next read: the client's find with the query's filter and the next ring of the grid. */
    BsonDocument nextWalkRead() {
        BsonDocument read = walkRead.clone();
        if (read.remove("startTransaction") != null) {
            read.remove("readConcern"); // the transaction's first read opened it; later ones run in it
        }
        read.put("filter", new BsonDocument("$and", new BsonArray(List.of(walkFilter, walk.next()))));
        read.put("limit", new BsonInt32((int) Math.max(1, budget + 1L - matches.examined())));
        read.put("batchSize", new BsonInt32(firstBatch((int) Math.max(0, budget - matches.examined()))));
        return read;
    }

    /**
     * Takes a decrypted batch of {@code size} bytes, the array at buf[start, end) (well-formed):
     * each candidate examined as it comes, in place, only the matches the answer can use kept
     * (copied: {@link MatchedCandidates}). True while the candidates are within the budget, this
     * query's and the proxy's ({@link EvaluationMemory}), which holds the whole batch while it is
     * examined and then what was kept of it.
     */
    boolean take(byte[] buf, int start, int end, long nextCursorId, long size) {
        cursorId = nextCursorId;
        bytes += size;
        int count = 0;
        for (BsonCursor c = new BsonCursor(buf, start, end); c.next(); ) {
            if (c.type != BsonCursor.DOCUMENT) {
                throw new BSONException("the server returned a candidate that is not a document");
            }
            count++;
        }
        if (bytes > MAX_CANDIDATE_BYTES || count + matches.examined() > budget) {
            return false;
        }
        long charged = size * EvaluationMemory.DECODED_COST;
        if (lease != null && !lease.grow(charged)) {
            overMemory = true;
            return false;
        }
        if (lease != null && nextCursorId != 0 && matches.examined() == 0 && count > 0
                && !lease.reserve(likelyTotal(size, count))) {
            overMemory = true; // more batches to come: what they will likely take is taken now, or the query refused
            return false;
        }
        long keptBefore = matches.keptBytes();
        StringOrder.under(steps.collator(), () -> { // the filter and a pruning sort compare strings under it
            for (BsonCursor c = new BsonCursor(buf, start, end); c.next(); ) {
                int length = c.valueEnd - c.valueStart;
                largest = Math.max(largest, length);
                matches.examine(buf, c.valueStart, length);
            }
            return null;
        });
        if (lease != null) {
            lease.shrink(charged - (matches.keptBytes() - keptBefore) * EvaluationMemory.DECODED_COST);
        }
        return true;
    }

    /** BSON bytes of the candidates kept for the answer: what computing it costs. */
    long keptBytes() {
        return matches.keptBytes();
    }

    int examined() {
        return matches.examined();
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
        int asked = (int) Math.max(1, Math.min(Math.min(budget + 1L - matches.examined(), fit), (long) lastAsked * GROWTH));
        lastAsked = asked;
        g.put("batchSize", new BsonInt32(asked));
        return g;
    }

    /**
     * What the query will likely hold at most, from the first batch: as many candidates as the
     * scan budget allows or the answer keeps, whichever is fewer, of the first ones' size, and a
     * batch being examined; within this query's byte cap, and no more than a quarter of the
     * proxy-wide budget (the server's part of the filter and the residual filter may select far
     * fewer: past the reservation a query still grows batch by batch).
     */
    private long likelyTotal(long firstBytes, int firstDocuments) {
        long perDocument = Math.max(1, firstBytes / firstDocuments);
        long held = perDocument * Math.min(budget + 1L, matches.mostHeld()) + BATCH_TARGET;
        return Math.min(Math.min(MAX_CANDIDATE_BYTES, held) * EvaluationMemory.DECODED_COST, lease.budget() / 4);
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
        List<BsonDocument> matched = masked(matches.kept(), masks);
        List<BsonDocument> out;
        if (steps.answer().pipeline() != null) {
            out = steps.answer().pipeline().run(matched);
        } else {
            List<BsonDocument> window = CandidateWindow.apply(matched, steps.window().skip(), steps.window().limit());
            out = new ArrayList<>(window.size());
            for (BsonDocument d : window) {
                BsonDocument read = matches.asRead(d);
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
        if (steps.answer().distinct() != null) {
            BsonArray values = new BsonArray(steps.answer().distinct().of(masked(matches.kept(), masks)));
            if (masks.any()) {
                masks.refuseDenied(values);
            }
            return new BsonDocument("values", values).append("ok", new BsonInt32(1));
        }
        long n = CandidateWindow.size(matches.matched(), steps.window().skip(), steps.window().limit());
        return new BsonDocument("n", new BsonInt32((int) n)).append("ok", new BsonInt32(1));
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
