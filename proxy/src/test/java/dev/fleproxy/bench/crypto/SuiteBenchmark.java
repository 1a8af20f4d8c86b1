package dev.fleproxy.bench.crypto;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.FieldCipher;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What the proxy pays per field: FieldCipher.encrypt (header, nonce, cipher, tag, one output
 * array) and decrypt, for a 100-byte value (YCSB's field size) and 1 KB. Values cycle through
 * 64 different inputs, so the deterministic variants are measured on fresh values as in use.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SuiteBenchmark {
    /** A typical context: a YCSB collection and one of its fields. */
    private static final byte[] CONTEXT = dev.fleproxy.crypto.Envelope.context("ycsb.usertable", "field0");

    private static final int VALUES = 64;

    @Param({"AES_GCM", "ARIA_GCM", "LEA_GCM", "AES_CBC_HMAC", "ARIA_CBC_HMAC", "SEED_CBC_HMAC", "TDES_CBC_HMAC"})
    public String suite;

    @Param({"100", "1024"})
    public int size;

    @Param({"false", "true"})
    public boolean deterministic;

    private FieldCipher cipher;
    private byte[][] values;
    private byte[][] envelopes;
    private int next;

    /** The key lengths the OpenSSL comparison uses: 256-bit AES/ARIA/LEA, SEED-128, 3-key 3DES. */
    static int keyLength(CipherAlgorithm alg) {
        return switch (alg) {
            case SEED -> 16;
            case TRIPLE_DES -> 24;
            default -> 32;
        };
    }

    @Setup
    public void setUp() {
        CipherSuite s = CipherSuite.valueOf(suite);
        SecureRandom random = new SecureRandom();
        byte[] k = new byte[keyLength(s.algorithm())];
        random.nextBytes(k);
        cipher = FieldCipher.create(new DataKey(UUID.randomUUID(), s.algorithm(), k), s, deterministic);
        values = new byte[VALUES][size];
        envelopes = new byte[VALUES][];
        for (int i = 0; i < VALUES; i++) {
            random.nextBytes(values[i]);
            envelopes[i] = cipher.encrypt((byte) 2, values[i], CONTEXT);
        }
    }

    @Benchmark
    public byte[] encrypt() {
        next = (next + 1) & (VALUES - 1);
        return cipher.encrypt((byte) 2, values[next], CONTEXT);
    }

    @Benchmark
    public FieldCipher.Plaintext decrypt() {
        next = (next + 1) & (VALUES - 1);
        return cipher.decrypt(envelopes[next], CONTEXT);
    }
}
