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
        if (skip < 0) {
            throw new NotEvaluable("skip must be non-negative (the server refuses " + skip + ")");
        }
        int from = (int) Math.min(skip, sorted.size());
        // Math.abs(Long.MIN_VALUE) stays negative; any magnitude that large is no limit on a list
        long keep = limit == 0 || limit == Long.MIN_VALUE ? Long.MAX_VALUE : Math.abs(limit);
        int to = (int) Math.min(sorted.size(), from + Math.min(keep, Integer.MAX_VALUE));
        return sorted.subList(from, to);
    }
}
