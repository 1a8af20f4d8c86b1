package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The envelope under every suite: round trips, tampering, the deterministic variants, misuse. */
class FieldCipherTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte STRING = 0x02;
    private static final byte INT32 = 0x10;

    static DataKey key(CipherAlgorithm alg, int bytes) {
        byte[] k = new byte[bytes];
        RANDOM.nextBytes(k);
        return new DataKey(UUID.randomUUID(), alg, k);
    }

    static int largestKey(CipherAlgorithm alg) {
        return alg == CipherAlgorithm.TRIPLE_DES ? 24 : alg == CipherAlgorithm.SEED ? 16 : 32;
    }

    /** Every suite with every key length its algorithm accepts. */
    static Stream<Arguments> suitesAndKeyLengths() {
        List<Arguments> out = new ArrayList<>();
        for (CipherSuite s : CipherSuite.values()) {
            for (int len : new int[] {16, 24, 32}) {
                if (s.algorithm().acceptsKeyLength(len)) {
                    out.add(Arguments.of(s, len));
                }
            }
        }
        return out.stream();
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    @ParameterizedTest(name = "{0} with a {1}-byte key")
    @MethodSource("suitesAndKeyLengths")
    void roundTripsEveryLengthInBothVariants(CipherSuite suite, int keyLength) {
        DataKey key = key(suite.algorithm(), keyLength);
        for (boolean det : new boolean[] {false, true}) {
            FieldCipher fc = FieldCipher.create(key, suite, det);
            for (int len = 0; len <= 70; len++) {
                byte[] value = bytes(len);
                byte[] env = fc.encrypt(STRING, value);
                assertEquals(Envelope.HEADER_LENGTH + suite.sealedLength(len), env.length);
                Envelope.Header h = Envelope.parse(env);
                assertEquals(suite, h.suite());
                assertEquals(det, h.deterministic());
                assertEquals(key.id(), h.keyId());
                assertEquals(STRING, h.bsonType());
                FieldCipher.Plaintext back = fc.decrypt(env);
                assertEquals(STRING, back.bsonType());
                assertArrayEquals(value, back.value());
            }
        }
    }

    @Test
    void theHeaderIsLaidOutAsTheFormatSays() {
        UUID id = UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0");
        DataKey key = new DataKey(id, CipherAlgorithm.AES, bytes(32));
        byte[] env = FieldCipher.create(key, CipherSuite.AES_GCM, true).encrypt(INT32, new byte[] {1, 0, 0, 0});
        assertEquals(0x81, env[0] & 0xff);
        assertEquals(0x41, env[1] & 0xff, "AES-GCM, deterministic");
        assertArrayEquals(org.bouncycastle.util.encoders.Hex.decode("89d6d529a2fe31ddae603cb35458dcc0"),
                Arrays.copyOfRange(env, 2, 18), "key id in RFC 4122 byte order");
        assertEquals(INT32, env[18]);
        assertEquals(19 + 12 + 4 + 16, env.length);
    }

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void everyFlippedBitAndEveryTruncationFailsAsDecryptionFailed(CipherSuite suite) {
        FieldCipher fc = FieldCipher.create(key(suite.algorithm(), largestKey(suite.algorithm())), suite, false);
        byte[] env = fc.encrypt(STRING, bytes(37));
        for (int i = 0; i < env.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] t = env.clone();
                t[i] ^= (byte) (1 << bit);
                DecryptionFailedException e = assertThrows(DecryptionFailedException.class, () -> fc.decrypt(t),
                        suite + " byte " + i + " bit " + bit);
                assertEquals("decryption failed", e.getMessage());
            }
        }
        for (int len = 0; len < env.length; len++) {
            byte[] t = Arrays.copyOf(env, len);
            assertThrows(DecryptionFailedException.class, () -> fc.decrypt(t), suite + " truncated to " + len);
        }
        byte[] longer = Arrays.copyOf(env, env.length + 1);
        assertThrows(DecryptionFailedException.class, () -> fc.decrypt(longer), "one byte appended");
    }

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void theWrongKeyOrSuiteFailsTheSameWay(CipherSuite suite) {
        CipherAlgorithm alg = suite.algorithm();
        int len = largestKey(alg);
        DataKey key = key(alg, len);
        byte[] env = FieldCipher.create(key, suite, false).encrypt(STRING, bytes(20));

        // Same key id, other material: a key mix-up in the KMS.
        DataKey impostor = new DataKey(key.id(), alg, bytes(len));
        assertThrows(DecryptionFailedException.class, () -> FieldCipher.create(impostor, suite, false).decrypt(env));
        // Another key altogether.
        assertThrows(DecryptionFailedException.class, () -> FieldCipher.create(key(alg, len), suite, false).decrypt(env));
        // The other construction of the same algorithm, where there is one.
        for (CipherSuite other : CipherSuite.values()) {
            if (other != suite && other.algorithm() == alg) {
                assertThrows(DecryptionFailedException.class, () -> FieldCipher.create(key, other, false).decrypt(env));
            }
        }
        for (int format : new int[] {0x00, 0x01, 0x80, 0x82, 0xff}) {
            byte[] t = env.clone();
            t[0] = (byte) format;
            assertThrows(DecryptionFailedException.class, () -> Envelope.parse(t), "format byte " + format);
        }
        for (int id : new int[] {0x00, 0x04, 0x13, 0x16, 0x7f, 0x81 | suite.id()}) {
            byte[] t = env.clone();
            t[1] = (byte) id;
            assertThrows(DecryptionFailedException.class, () -> FieldCipher.create(key, suite, false).decrypt(t),
                    "suite byte " + id);
        }
    }

    @Test
    void aKeyOfAnotherAlgorithmOrLengthIsAConfigurationError() {
        DataKey aria = key(CipherAlgorithm.ARIA, 32);
        CryptoException e = assertThrows(CryptoException.class, () -> FieldCipher.create(aria, CipherSuite.AES_GCM, false));
        assertFalse(e instanceof DecryptionFailedException);
        assertTrue(e.getMessage().contains("needs a AES key, but key " + aria.id() + " is ARIA"), e.getMessage());
        CryptoException len = assertThrows(CryptoException.class,
                () -> new DataKey(UUID.randomUUID(), CipherAlgorithm.TRIPLE_DES, bytes(16)));
        assertTrue(len.getMessage().contains("TRIPLE_DES keys must be 192 bits"), len.getMessage());
        assertThrows(CryptoException.class, () -> new DataKey(UUID.randomUUID(), CipherAlgorithm.SEED, bytes(32)));
        assertFalse(aria.toString().contains(org.bouncycastle.util.encoders.Hex.toHexString(aria.material())));
    }

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void deterministicIsEqualForEqualInputsOnly(CipherSuite suite) {
        CipherAlgorithm alg = suite.algorithm();
        DataKey key = key(alg, largestKey(alg));
        FieldCipher det = FieldCipher.create(key, suite, true);
        byte[] value = bytes(25);
        byte[] a = det.encrypt(STRING, value);
        byte[] b = det.encrypt(STRING, value.clone());
        assertArrayEquals(a, b, "same value, key and type");
        // Repeated many times in a row: the ciphers' nonce-reuse guards must not get in the way.
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(a, det.encrypt(STRING, value));
            assertArrayEquals(value, det.decrypt(a).value());
        }
        assertFalse(Arrays.equals(a, det.encrypt(INT32, value)), "another BSON type");
        assertFalse(Arrays.equals(a, FieldCipher.create(key(alg, largestKey(alg)), suite, true).encrypt(STRING, value)),
                "another key");
        byte[] other = value.clone();
        other[24] ^= 1;
        assertFalse(Arrays.equals(a, det.encrypt(STRING, other)), "another value");

        FieldCipher random = FieldCipher.create(key, suite, false);
        assertFalse(Arrays.equals(random.encrypt(STRING, value), random.encrypt(STRING, value)), "random variant");
        assertArrayEquals(value, random.decrypt(a).value(), "either variant's cipher decrypts both");
        assertArrayEquals(value, det.decrypt(random.encrypt(STRING, value)).value());
    }

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void isThreadSafe(CipherSuite suite) throws Exception {
        CipherAlgorithm alg = suite.algorithm();
        FieldCipher random = FieldCipher.create(key(alg, largestKey(alg)), suite, false);
        FieldCipher det = FieldCipher.create(random.key(), suite, true);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> jobs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                jobs.add(pool.submit(() -> {
                    for (int i = 0; i < 500; i++) {
                        byte[] v = bytes(i % 90);
                        assertArrayEquals(v, random.decrypt(random.encrypt(STRING, v)).value());
                        byte[] e1 = det.encrypt(STRING, v);
                        assertArrayEquals(e1, det.encrypt(STRING, v));
                        assertArrayEquals(v, det.decrypt(e1).value());
                    }
                    return null;
                }));
            }
            for (Future<?> f : jobs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
