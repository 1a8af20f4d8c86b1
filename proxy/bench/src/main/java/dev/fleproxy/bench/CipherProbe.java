package dev.fleproxy.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The JDK's AES-GCM alone, timed by the benchmark in its own process halfway through each measured
 * phase of an AES_GCM target: the cipher's own work that target 3 sets what AES_GCM adds against,
 * measured in the same run and under the same load as the proxy (a row of results/crypto is from
 * another day and another load; between phases the machine is quieter, and these 2-core machines
 * run a thread 30–50 % slower when the other core is busy). The same shapes as the proxy's: per
 * operation {@link OverheadBenchmark#FIELDS} values of {@value #VALUE_BYTES} bytes (what a BSON
 * string of 100 characters is: length, bytes, NUL), each sealed with a fresh random 12-byte nonce
 * (drawn before the timing starts: the figure is the cipher's alone) and {@value #AAD_BYTES} bytes
 * of associated data (a 19-byte envelope header and a field's context, "bench.aes\0field0\0"), by
 * one Cipher that init() sets up per value, as the proxy's does. CPU time of this thread (ThreadMXBean), not wall time, so what else runs on the machine
 * moves it little.
 */
public final class CipherProbe {
    static final int VALUE_BYTES = 105;
    static final int AAD_BYTES = 19 + 17;
    /** Operations per timed batch, and batches per sample (the sample is their median). */
    static final int BATCH_OPS = 1000;
    static final int BATCHES = 5;

    /**
     * One sample: the cipher's CPU ms per 1,000 benchmark operations, to seal (inserts) and to open
     * (reads), and the heap it allocates per operation each way (NaN where the JVM does not count it).
     */
    public record Sample(int round, String during, double sealMsPer1000Ops, double openMsPer1000Ops,
                         double sealBytesPerOp, double openBytesPerOp) {
    }

    /** The median over samples of one of their figures (NaN if there are none, or one is NaN). */
    public static double median(List<Sample> samples, java.util.function.ToDoubleFunction<Sample> figure) {
        return Figures.Spread.of(samples.stream().map(figure::applyAsDouble).toList()).median();
    }

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final com.sun.management.ThreadMXBean allocation =
            threads instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported() ? t : null;
    private final SecretKeySpec key;
    private final SecureRandom random = new SecureRandom();
    private final byte[][] values = new byte[OverheadBenchmark.FIELDS][VALUE_BYTES];
    private final byte[][] aads = new byte[OverheadBenchmark.FIELDS][];
    /** A batch's nonces, drawn before it is timed: every seal takes the next 12 bytes. */
    private final byte[] nonces = new byte[BATCH_OPS * OverheadBenchmark.FIELDS * 12];
    private final int[] lastNonce = new int[OverheadBenchmark.FIELDS];
    private final byte[][] sealed = new byte[OverheadBenchmark.FIELDS][];
    private final Cipher cipher;
    private long sink;

    public CipherProbe() {
        byte[] k = new byte[32];
        random.nextBytes(k);
        key = new SecretKeySpec(k, "AES");
        for (int f = 0; f < OverheadBenchmark.FIELDS; f++) {
            random.nextBytes(values[f]);
            byte[] ctx = ("bench.aes\0field" + f + "\0").getBytes(StandardCharsets.UTF_8);
            aads[f] = Arrays.copyOf(new byte[19], 19 + ctx.length);
            System.arraycopy(ctx, 0, aads[f], 19, ctx.length);
        }
        try {
            cipher = Cipher.getInstance("AES/GCM/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES/GCM is not available: " + e.getMessage(), e);
        }
    }

    /** The JDK provider that serves AES/GCM/NoPadding here, for the report. */
    public String provider() {
        return cipher.getProvider().getName() + " " + cipher.getProvider().getVersionStr();
    }

    /** Runs the cipher for about the given time unrecorded, so that the JIT has compiled it. */
    public void warm(double seconds) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            random.nextBytes(nonces);
            sealBatch(100);
            openBatch(100);
        }
    }

    /** The median of {@value #BATCHES} batches of {@value #BATCH_OPS} operations, each way. */
    public Sample measure(int round, String during) {
        List<Double> seal = new ArrayList<>();
        List<Double> open = new ArrayList<>();
        double sealBytes = Double.NaN;
        double openBytes = Double.NaN;
        for (int b = 0; b < BATCHES; b++) {
            seal.add(msPer1000Ops(true));
            open.add(msPer1000Ops(false));
        }
        if (allocation != null) { // apart from the timed batches: reading the counter costs time
            random.nextBytes(nonces);
            long a0 = allocation.getCurrentThreadAllocatedBytes();
            sealBatch(BATCH_OPS);
            long a1 = allocation.getCurrentThreadAllocatedBytes();
            openBatch(BATCH_OPS);
            long a2 = allocation.getCurrentThreadAllocatedBytes();
            sealBytes = (double) (a1 - a0) / BATCH_OPS;
            openBytes = (double) (a2 - a1) / BATCH_OPS;
        }
        return new Sample(round, during, Figures.Spread.of(seal).median(), Figures.Spread.of(open).median(), sealBytes,
                openBytes);
    }

    private double msPer1000Ops(boolean sealing) {
        if (sealing) {
            random.nextBytes(nonces);
        }
        long t0 = threads.getCurrentThreadCpuTime();
        if (sealing) {
            sealBatch(BATCH_OPS);
        } else {
            openBatch(BATCH_OPS);
        }
        long ns = threads.getCurrentThreadCpuTime() - t0;
        return ns / 1e3 / BATCH_OPS; // ns per operation / 1,000 = µs per operation = ms per 1,000 operations
    }

    private void sealBatch(int ops) {
        try {
            int n = 0;
            for (int i = 0; i < ops; i++) {
                for (int f = 0; f < OverheadBenchmark.FIELDS; f++, n += 12) {
                    lastNonce[f] = n;
                    cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonces, n, 12));
                    cipher.updateAAD(aads[f]);
                    sealed[f] = cipher.doFinal(values[f]);
                }
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed: " + e.getMessage(), e);
        }
    }

    private void openBatch(int ops) {
        try {
            for (int i = 0; i < ops; i++) {
                for (int f = 0; f < OverheadBenchmark.FIELDS; f++) {
                    cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, nonces, lastNonce[f], 12));
                    cipher.updateAAD(aads[f]);
                    sink += cipher.doFinal(sealed[f])[0];
                }
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed: " + e.getMessage(), e);
        }
    }
}
