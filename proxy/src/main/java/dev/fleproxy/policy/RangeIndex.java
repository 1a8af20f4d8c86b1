package dev.fleproxy.policy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * An opt-in range index on one encrypted field (docs/query-model.md#range-indexes): numbers in
 * [min, max] are placed on a grid of 10^-precision steps, numbered 0 … 2^bits − 1, and each stored
 * value carries one tag per stored level of the binary tree over that grid (every
 * {@code sparsity}-th level, the leaves always). A range becomes the tags of the tree's nodes that
 * cover it exactly. Everything here is about plaintext numbers; the tags themselves are
 * {@code crypto.RangeTags}'. An index of {@code dates} places dates instead, by their
 * milliseconds since the epoch (min and max in them, steps of one millisecond).
 */
public record RangeIndex(BigDecimal min, BigDecimal max, int precision, int sparsity, boolean dates) {
    public RangeIndex(BigDecimal min, BigDecimal max, int precision, int sparsity) {
        this(min, max, precision, sparsity, false);
    }

    /** The top-level field the proxy keeps a document's search tags in, on collections with an index. */
    public static final String TAG_FIELD = "__fle";

    /** Grids finer than this are refused: the tree's depth (and each document's tags) grow with it, and
     * positions stay non-negative longs. */
    public static final int MAX_BITS = 62;

    public RangeIndex {
        if (min.compareTo(max) >= 0) {
            throw new IllegalArgumentException("min must be below max");
        }
        if (precision < 0 || sparsity < 1) {
            throw new IllegalArgumentException("precision >= 0, sparsity >= 1");
        }
        if (bits(min, max, precision) > MAX_BITS) {
            throw new IllegalArgumentException("(max - min) * 10^precision needs more than " + MAX_BITS + " bits");
        }
    }

    /** The depth of the tree: grid positions are 0 … 2^bits − 1. */
    public int bits() {
        return bits(min, max, precision);
    }

    private static int bits(BigDecimal min, BigDecimal max, int precision) {
        BigInteger top = max.subtract(min).movePointRight(precision).setScale(0, RoundingMode.FLOOR).toBigIntegerExact();
        return Math.max(1, top.bitLength());
    }

    /**
     * The grid position of a number: floor((v − min) · 10^precision), a non-decreasing function of
     * v, so v in [a, b] puts it in [position(a), position(b)]; -1 below min, -2 above max.
     */
    public long position(BigDecimal v) {
        if (v.compareTo(min) < 0) {
            return -1;
        }
        if (v.compareTo(max) > 0) {
            return -2;
        }
        return v.subtract(min).movePointRight(precision).setScale(0, RoundingMode.FLOOR).longValue();
    }

    /** The last grid position, 2^bits − 1. */
    public long lastPosition() {
        return (1L << bits()) - 1;
    }

    /** True for a level of the tree whose tags are stored: the leaves, and every sparsity-th level above. */
    public boolean stored(int level) {
        return level < bits() && level % sparsity == 0;
    }
}
