package dev.fleproxy.rewrite.read;

import dev.fleproxy.rewrite.bson.TopLevelFields;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.evaluate.DocumentSort;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * What a query the proxy evaluates keeps of its candidates, examined as their batches arrive: a
 * candidate the residual filter rejects is dropped at once, and only as many matches are kept as
 * the answer can use — none for a count (their number suffices), the first skip + limit of a find
 * with a limit and no sort, the best skip + limit of a sorted one (pruned to those whenever twice as
 * many are held), every match otherwise. So a top-k query over 10,000 candidates of 4.4 KB holds
 * one batch and its k best, not 44 MB (as mongod's own sort with a limit keeps k). A candidate is
 * decoded only as far as the top-level fields the filter and the sort read; those kept are decoded
 * whole when the answer is computed.
 *
 * <p>Pruning keeps the answer exact: the sort is stable and the kept documents stay in the order
 * they arrived among equal keys, so a document pruned had skip + limit documents ahead of it that
 * stay ahead of it in the whole set's order. The filter and the sort run under the query's
 * collation (the caller's {@code StringOrder}). Not thread-safe: used on the loop or the pool,
 * never both at once.
 */
final class MatchedCandidates {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();
    /** How many more than skip + limit a sorted query holds before it prunes (besides doubling). */
    private static final int PRUNE_SLACK = 64;

    private final DocumentFilter residual;
    private final DocumentSort sort;
    /** How many matches the answer can use (Long.MAX_VALUE: all); 0 for a count. */
    private final long wanted;
    /** Matches held before they are pruned to {@link #wanted} (sorted queries), or no more kept (unsorted). */
    private final long held;
    private final boolean keepBytes;
    /** The top-level fields the filter and the sort read (null: any), each candidate decoded only so far. */
    private final TopLevelFields fieldsRead;
    /** The kept candidates as examined: decoded whole, or only as far as {@link #fieldsRead}. */
    private final List<BsonDocument> kept = new ArrayList<>();
    /**
     * The bytes each kept candidate was read as (a copy: a slice would hold its whole batch), when
     * it was decoded in part or is answered as read.
     */
    private final Map<BsonDocument, RawBsonDocument> bytes = new IdentityHashMap<>();
    /** The whole documents {@link #kept()} returned, by the bytes they were read as (answered as read). */
    private final Map<BsonDocument, RawBsonDocument> asRead = new IdentityHashMap<>();
    /** The BSON bytes of each kept candidate, for the memory it holds. */
    private final Map<BsonDocument, Integer> sizes = new IdentityHashMap<>();
    /**
     * After a prune: whether a candidate sorts no better than the worst kept one, and so can never
     * be among the best (as many, read before it, come before it); null before the first.
     */
    private java.util.function.Predicate<BsonDocument> beyondTheBest;
    private long keptBytes;
    private int examined;
    private long matched;

    /**
     * {@code count}: only the number of matches is answered; {@code window}: the answer's skip and
     * limit apply to the matches (a find's, not a pipeline's or a distinct's); {@code keepBytes}: the
     * answer returns candidates in the bytes they were read as.
     */
    MatchedCandidates(DocumentFilter residual, DocumentSort sort, boolean count, EvaluatedQuery.Window window,
                      boolean keepBytes) {
        this.residual = residual;
        this.sort = sort;
        this.keepBytes = keepBytes;
        Set<String> read = fieldsRead(residual, sort);
        this.fieldsRead = read == null ? null : new TopLevelFields(read);
        this.wanted = count ? 0 : window == null ? Long.MAX_VALUE : wanted(window);
        this.held = wanted == Long.MAX_VALUE || wanted == 0 || sort == null ? wanted
                : Math.max(wanted * 2, wanted + PRUNE_SLACK);
    }

    private static Set<String> fieldsRead(DocumentFilter residual, DocumentSort sort) {
        Set<String> fields = new HashSet<>();
        if (residual != null) {
            Set<String> filtered = residual.fieldsRead();
            if (filtered == null) {
                return null;
            }
            fields.addAll(filtered);
        }
        if (sort != null) {
            fields.addAll(sort.fieldsRead());
        }
        return fields;
    }

    /** skip + |limit| of a find's window; all (Long.MAX_VALUE) without a limit, or when the window is refused later. */
    private static long wanted(EvaluatedQuery.Window w) {
        long limit = w.limit();
        if (limit == 0 || limit == Long.MIN_VALUE || w.skip() < 0) {
            return Long.MAX_VALUE; // a negative skip is refused when answered, as the server refuses it
        }
        long sum = w.skip() + Math.abs(limit);
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /**
     * The most candidates held at once besides a batch being examined: what a query's reservation
     * of memory is sized by (Long.MAX_VALUE: as many as match).
     */
    long mostHeld() {
        return held;
    }

    /**
     * Examines one candidate, the well-formed document at buf[off, off + size): what is kept of it
     * is copied (the buffer is the batch's, reused for the next).
     */
    void examine(byte[] buf, int off, int size) {
        examined++;
        // decoded once (a raw document decodes again on every get, and each is read many times), as far as is read
        BsonDocument decoded = fieldsRead != null ? fieldsRead.decode(buf, off, size)
                : new RawBsonDocument(buf, off, size).decode(CODEC);
        if (residual != null && !residual.matches(decoded)) {
            return;
        }
        matched++;
        if (kept.size() >= held || beyondTheBest != null && beyondTheBest.test(decoded)) {
            return; // unsorted, with a limit: the first matches are the answer's; sorted: not among the best
        }
        kept.add(decoded);
        sizes.put(decoded, size);
        keptBytes += size;
        if (keepBytes || fieldsRead != null) {
            bytes.put(decoded, new RawBsonDocument(Arrays.copyOfRange(buf, off, off + size)));
        }
        if (sort != null && kept.size() >= held) {
            prune();
        }
    }

    /** Keeps the best {@link #wanted} in sort order, ties in the order they arrived. */
    private void prune() {
        List<BsonDocument> sorted = sort.sort(kept);
        for (BsonDocument d : sorted.subList((int) wanted, sorted.size())) {
            keptBytes -= sizes.remove(d);
            bytes.remove(d);
        }
        kept.clear();
        kept.addAll(sorted.subList(0, (int) wanted));
        beyondTheBest = wanted == 0 ? null : sort.notBefore(kept.get((int) wanted - 1));
    }

    int examined() {
        return examined;
    }

    /**
     * The last of the best skip + limit matches so far, in sort order; null while fewer have
     * matched, or without a sort and a limit.
     */
    BsonDocument lastOfTheBest() {
        if (sort == null || wanted == Long.MAX_VALUE || wanted == 0 || kept.size() < wanted) {
            return null;
        }
        return sort.sort(kept).get((int) wanted - 1);
    }

    /** How many candidates matched the residual filter (kept or not). */
    long matched() {
        return matched;
    }

    /** The BSON bytes of the candidates kept. */
    long keptBytes() {
        return keptBytes;
    }

    /**
     * The kept matches, whole, sorted if the query sorts (each sort key computed once; ties in the
     * order read).
     */
    List<BsonDocument> kept() {
        List<BsonDocument> ordered = sort != null ? sort.sort(kept) : kept;
        List<BsonDocument> out = new ArrayList<>(ordered.size());
        asRead.clear();
        for (BsonDocument d : ordered) {
            RawBsonDocument raw = bytes.get(d);
            BsonDocument whole = raw != null && fieldsRead != null ? raw.decode(CODEC) : d;
            if (keepBytes && raw != null) {
                asRead.put(whole, raw);
            }
            out.add(whole);
        }
        return out;
    }

    /** The bytes a kept candidate was read as, or null. */
    RawBsonDocument asRead(BsonDocument d) {
        return asRead.get(d);
    }
}
