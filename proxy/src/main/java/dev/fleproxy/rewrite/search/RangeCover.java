package dev.fleproxy.rewrite.search;

import dev.fleproxy.policy.RangeIndex;
import java.util.ArrayList;
import java.util.List;

/**
 * The tree nodes that cover grid positions [lo, hi] exactly, fewest first-fit from the left: at
 * each position the highest stored level whose node starts there and ends within the range. The
 * leaves are always stored, so every range has a cover; with sparsity s at most 2·(2^s − 1) nodes
 * per stored level.
 */
public final class RangeCover {
    /** One node: its level and the first grid position it holds. */
    public record Node(int level, long start) {
    }

    private RangeCover() {
    }

    /** The cover of [lo, hi] (0 ≤ lo, hi ≤ the index's last position; empty when lo > hi). */
    public static List<Node> of(RangeIndex index, long lo, long hi) {
        List<Node> out = new ArrayList<>();
        long p = lo;
        while (p <= hi && p >= 0) {
            int level = 0;
            for (int l = index.bits() - 1; l > 0; l--) {
                long size = 1L << l;
                if (index.stored(l) && (p & (size - 1)) == 0 && p + size - 1 <= hi) {
                    level = l;
                    break;
                }
            }
            out.add(new Node(level, p));
            p += 1L << level;
        }
        return out;
    }
}
