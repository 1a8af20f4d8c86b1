package dev.fleproxy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A latency's bucket: the first whose upper bound is at least the value (le), else +Inf. */
class LoopMetersTest {
    /** What the bucket must be, by a plain binary search. */
    private static int expected(long[] bounds, long v) {
        int i = Arrays.binarySearch(bounds, v);
        return i >= 0 ? i : -i - 1;
    }

    private static void agreesWithBinarySearch(long[] bounds) {
        LoopMeters m = new LoopMeters(bounds);
        long[] edges = {0, 1, 2, 3, 999, 1_000, 1_001, Long.MAX_VALUE - 1, Long.MAX_VALUE};
        for (long v : edges) {
            assertEquals(expected(bounds, v), m.bucket(v), "value " + v);
        }
        for (long b : bounds) {
            for (long v = Math.max(0, b - 2); v <= b + 2; v++) {
                assertEquals(expected(bounds, v), m.bucket(v), "value " + v);
            }
        }
        for (int k = 0; k < Long.SIZE - 1; k++) {
            for (long v : new long[] {(1L << k) - 1, 1L << k, (1L << k) + 1}) {
                assertEquals(expected(bounds, v), m.bucket(v), "value " + v);
            }
        }
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 100_000; i++) {
            long v = r.nextLong(1L << r.nextInt(1, 40));
            assertEquals(expected(bounds, v), m.bucket(v), "value " + v);
        }
    }

    @Test
    void theProxysBucketsAgreeWithABinarySearch() {
        agreesWithBinarySearch(ProxyMetrics.latencyBucketNanos());
    }

    @Test
    void denseAndSparseBoundsAgreeWithABinarySearch() {
        long[] dense = new long[200];
        for (int i = 0; i < dense.length; i++) {
            dense[i] = i + 1; // many bounds between two powers of two
        }
        agreesWithBinarySearch(dense);
        agreesWithBinarySearch(new long[] {5, 1L << 40, Long.MAX_VALUE - 1});
    }
}
