package dev.fleproxy.rewrite.evaluate;

import java.util.List;

/**
 * find's skip and limit on an already sorted list of candidates: skip the first 'skip', then keep
 * at most 'limit' (0: no limit; a negative limit as find reads it, its absolute value, the
 * negative only asking for a single batch). A negative skip is refused, as the server refuses it.
 */
public final class CandidateWindow {
    private CandidateWindow() {
    }

    /** The window of sorted; a view of it, not a copy. */
    public static <T> List<T> apply(List<T> sorted, long skip, long limit) {
        long from = Math.min(skip(skip), sorted.size());
        return sorted.subList((int) from, (int) (from + size(sorted.size(), skip, limit)));
    }

    /** How many of {@code size} documents the window holds: a count's answer, with no documents kept. */
    public static long size(long size, long skip, long limit) {
        long from = Math.min(skip(skip), size);
        // Math.abs(Long.MIN_VALUE) stays negative; any magnitude that large is no limit on a list
        long keep = limit == 0 || limit == Long.MIN_VALUE ? Long.MAX_VALUE : Math.abs(limit);
        return Math.min(size - from, keep);
    }

    private static long skip(long skip) {
        if (skip < 0) {
            throw new NotEvaluable("skip must be non-negative (the server refuses " + skip + ")");
        }
        return skip;
    }
}
