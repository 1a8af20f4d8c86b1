package dev.fleproxy.bench.crypto;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.Ciphers;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.engines.LEAEngine;
import org.bouncycastle.crypto.params.KeyParameter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The source paper 001's table for our implementations of AES (JDK, AES-NI), ARIA and LEA:
 * key setup, encryption and decryption of 1 KB in ECB (the bare block cipher), and key setup
 * followed by each. 128-bit keys, as in the paper. Average time per operation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BlockCipherBenchmark {
    static final int MESSAGE = 1024;

    @Param({"AES", "ARIA", "LEA"})
    public String algorithm;

    private final byte[][] keys = new byte[2][16];
    private int which;
    private final byte[] in = new byte[MESSAGE];
    private final byte[] out = new byte[MESSAGE];
    private Block enc;
    private Block dec;

    /** One direction of one cipher: keyed, then run over whole blocks. */
    interface Block {
        void key(byte[] key);

        void run(byte[] in, byte[] out);
    }

    static Block bc(java.util.function.Supplier<BlockCipher> engines, boolean encrypt) {
        BlockCipher e = engines.get();
        return new Block() {
            @Override
            public void key(byte[] key) {
                e.init(encrypt, new KeyParameter(key));
            }

            @Override
            public void run(byte[] in, byte[] out) {
                int bs = e.getBlockSize();
                for (int i = 0; i < in.length; i += bs) {
                    e.processBlock(in, i, out, i);
                }
            }
        };
    }

    static Block jceAes(boolean encrypt) {
        try {
            Cipher c = Cipher.getInstance("AES/ECB/NoPadding");
            int mode = encrypt ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE;
            return new Block() {
                @Override
                public void key(byte[] key) {
                    try {
                        c.init(mode, new SecretKeySpec(key, "AES"));
                    } catch (GeneralSecurityException e) {
                        throw new IllegalStateException(e);
                    }
                }

                @Override
                public void run(byte[] in, byte[] out) {
                    try {
                        c.doFinal(in, 0, in.length, out, 0);
                    } catch (GeneralSecurityException e) {
                        throw new IllegalStateException(e);
                    }
                }
            };
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static Block of(String algorithm, boolean encrypt) {
        return switch (algorithm) {
            case "AES" -> jceAes(encrypt);
            case "ARIA" -> bc(Ciphers.engines(CipherAlgorithm.ARIA), encrypt);
            case "LEA" -> bc(LEAEngine::new, encrypt);
            default -> throw new IllegalArgumentException(algorithm);
        };
    }

    @Setup
    public void setUp() {
        SecureRandom r = new SecureRandom();
        r.nextBytes(keys[0]);
        r.nextBytes(keys[1]);
        r.nextBytes(in);
        enc = of(algorithm, true);
        dec = of(algorithm, false);
        enc.key(keys[0]);
        dec.key(keys[0]);
    }

    /** Alternates between two keys, so that no implementation can skip the work as "same key". */
    private byte[] nextKey() {
        which ^= 1;
        return keys[which];
    }

    @Benchmark
    public void keySetup() {
        enc.key(nextKey());
    }

    @Benchmark
    public byte[] encrypt() {
        enc.run(in, out);
        return out;
    }

    @Benchmark
    public byte[] decrypt() {
        dec.run(in, out);
        return out;
    }

    @Benchmark
    public byte[] keyAndEncrypt() {
        enc.key(nextKey());
        enc.run(in, out);
        return out;
    }

    @Benchmark
    public byte[] keyAndDecrypt() {
        dec.key(nextKey());
        dec.run(in, out);
        return out;
    }
}
