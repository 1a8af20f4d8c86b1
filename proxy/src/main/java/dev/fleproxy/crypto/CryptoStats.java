package dev.fleproxy.crypto;

import java.util.concurrent.atomic.LongAdder;

/**
 * Values sealed and opened per suite, the time spent and the authentication failures, for the
 * metrics endpoint. Process-wide (a process runs one proxy) and off until {@link #enable} is
 * called, so a proxy without the admin listener, the benchmarks and the tests pay one volatile
 * read per value. LongAdders: the event loops count at once without contending.
 */
public final class CryptoStats {
    private static volatile boolean enabled;
    private static final int SUITES = CipherSuite.values().length;
    private static final LongAdder[] SEALED = adders();
    private static final LongAdder[] OPENED = adders();
    private static final LongAdder[] SEAL_NANOS = adders();
    private static final LongAdder[] OPEN_NANOS = adders();
    private static final LongAdder[] FAILURES = adders();

    private CryptoStats() {
    }

    private static LongAdder[] adders() {
        LongAdder[] a = new LongAdder[SUITES];
        for (int i = 0; i < a.length; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    public static void enable() {
        enabled = true;
    }

    static boolean enabled() {
        return enabled;
    }

    static void sealed(CipherSuite s, long nanos) {
        SEALED[s.ordinal()].increment();
        SEAL_NANOS[s.ordinal()].add(nanos);
    }

    static void opened(CipherSuite s, long nanos) {
        OPENED[s.ordinal()].increment();
        OPEN_NANOS[s.ordinal()].add(nanos);
    }

    static void failed(CipherSuite s) {
        FAILURES[s.ordinal()].increment();
    }

    public static long sealed(CipherSuite s) {
        return SEALED[s.ordinal()].sum();
    }

    public static long opened(CipherSuite s) {
        return OPENED[s.ordinal()].sum();
    }

    public static long sealNanos(CipherSuite s) {
        return SEAL_NANOS[s.ordinal()].sum();
    }

    public static long openNanos(CipherSuite s) {
        return OPEN_NANOS[s.ordinal()].sum();
    }

    /** Envelopes that failed authentication (tampered, or sealed under another key or context). */
    public static long failures(CipherSuite s) {
        return FAILURES[s.ordinal()].sum();
    }
}
