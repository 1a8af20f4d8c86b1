package dev.fleproxy.bench;

import java.util.Arrays;
import java.util.List;

/**
 * One worker thread's operation latencies in a phase, every one kept (a phase of 4 s holds tens of
 * thousands: a few hundred KB), so that the phase's percentiles are exact rather than a
 * histogram's bucket. Written by its thread alone; read after the thread has ended.
 */
final class Latencies {
    private long[] nanos = new long[4096];
    private int count;

    void add(long n) {
        if (count == nanos.length) {
            nanos = Arrays.copyOf(nanos, 2 * count);
        }
        nanos[count++] = n;
    }

    /** The {@code q}-quantiles (0..1, nearest rank) of all the threads' latencies, in ms; NaN for none. */
    static double[] percentilesMs(List<Latencies> threads, double... q) {
        int total = threads.stream().mapToInt(t -> t.count).sum();
        double[] out = new double[q.length];
        if (total == 0) {
            Arrays.fill(out, Double.NaN);
            return out;
        }
        long[] all = new long[total];
        int at = 0;
        for (Latencies t : threads) {
            System.arraycopy(t.nanos, 0, all, at, t.count);
            at += t.count;
        }
        Arrays.sort(all);
        for (int i = 0; i < q.length; i++) {
            int rank = (int) Math.ceil(q[i] * total);
            out[i] = all[Math.min(total, Math.max(1, rank)) - 1] / 1e6;
        }
        return out;
    }
}
