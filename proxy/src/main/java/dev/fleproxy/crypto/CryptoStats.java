package dev.fleproxy.crypto;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Values sealed and opened per suite, the time spent and the authentication failures, for the
 * metrics endpoint. Process-wide (a process runs one proxy) and off until {@link #enable} is
 * called, so a proxy without the admin listener, the benchmarks and the tests pay one volatile
 * read per value. LongAdders: the event loops count at once without contending. Every value is
 * counted; the time spent is estimated from a random one in {@value #TIME_EVERY} values, each
 * standing for that many (two clock reads around every value cost about 0.5 % of the proxy's CPU
 * per operation on AES-GCM with ten encrypted fields). Random, not every n-th: a document's fields
 * come in a fixed order, so every n-th value could always be the same field.
 */
public final class CryptoStats {
    private static volatile boolean enabled;
    private static final int SUITES = CipherSuite.values().length;
    private static final LongAdder[] SEALED = adders();
    private static final LongAdder[] OPENED = adders();
    private static final LongAdder[] SEAL_NANOS = adders();
    private static final LongAdder[] OPEN_NANOS = adders();
    private static final LongAdder[] FAILURES = adders();

    /** One value in this many is timed, on average. */
    static final int TIME_EVERY = 8;

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

    /** Whether the value about to be sealed or opened is one of the timed ones. */
    static boolean timeNext() {
        return ThreadLocalRandom.current().nextInt(TIME_EVERY) == 0;
    }

    /** A value sealed, not timed. */
    static void countSealed(CipherSuite s) {
        SEALED[s.ordinal()].increment();
    }

    /** A value sealed in nanos, one of the timed ones ({@link #timeNext}): it stands for TIME_EVERY values. */
    static void countSealed(CipherSuite s, long nanos) {
        SEALED[s.ordinal()].increment();
        SEAL_NANOS[s.ordinal()].add(nanos * TIME_EVERY);
    }

    /** A value opened, not timed. */
    static void countOpened(CipherSuite s) {
        OPENED[s.ordinal()].increment();
    }

    /** A value opened in nanos, one of the timed ones: it stands for TIME_EVERY values. */
    static void countOpened(CipherSuite s, long nanos) {
        OPENED[s.ordinal()].increment();
        OPEN_NANOS[s.ordinal()].add(nanos * TIME_EVERY);
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

    /** The time spent sealing, estimated from the timed values. */
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
