package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
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

/**
 * The envelope under every suite, random and deterministic: round trips, the v2 header, the v2
 * context binding (docs/envelope-format.md), v1 envelopes still opening, format confusion, tampering,
 * the deterministic variants, misuse.
 */
class FieldCipherTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte STRING = 0x02;
    private static final byte INT32 = 0x10;
    private static final byte[] CONTEXT = Envelope.context("hr.people", "ssn");

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

    /** Every suite, random and deterministic. */
    static Stream<Arguments> suitesAndVariants() {
        List<Arguments> out = new ArrayList<>();
        for (CipherSuite s : CipherSuite.values()) {
            out.add(Arguments.of(s, false));
            out.add(Arguments.of(s, true));
        }
        return out.stream();
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static FieldCipher cipher(CipherSuite suite, boolean deterministic) {
        CipherAlgorithm alg = suite.algorithm();
        return FieldCipher.create(key(alg, largestKey(alg)), suite, deterministic);
    }

    private static String variant(boolean deterministic) {
        return deterministic ? "deterministic" : "random";
    }

    @ParameterizedTest(name = "{0} with a {1}-byte key")
    @MethodSource("suitesAndKeyLengths")
    void roundTripsEveryLengthInBothVariants(CipherSuite suite, int keyLength) {
        DataKey key = key(suite.algorithm(), keyLength);
        for (boolean det : new boolean[] {false, true}) {
            FieldCipher fc = FieldCipher.create(key, suite, det);
            for (int len = 0; len <= 70; len++) {
                byte[] value = bytes(len);
                byte[] env = fc.encrypt(STRING, value, CONTEXT);
                assertEquals(Envelope.HEADER_LENGTH + suite.sealedLength(len), env.length);
                Envelope.Header h = Envelope.parse(env);
                assertEquals(Envelope.FORMAT_V2, h.format());
                assertEquals(suite, h.suite());
                assertEquals(det, h.deterministic());
                assertEquals(key.id(), h.keyId());
                assertEquals(STRING, h.bsonType());
                FieldCipher.Plaintext back = fc.decrypt(env, CONTEXT);
                assertEquals(STRING, back.bsonType());
                assertArrayEquals(value, back.value());

                byte[] v1 = fc.encryptLegacyV1(STRING, value);
                assertEquals(env.length, v1.length, "v1 and v2 envelopes have the same layout");
                assertEquals(Envelope.FORMAT_V1, Envelope.parse(v1).format());
                assertArrayEquals(value, fc.decrypt(v1, CONTEXT).value());
            }
        }
    }

    @Test
    void theHeaderIsLaidOutAsTheFormatSays() {
        UUID id = UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0");
        DataKey key = new DataKey(id, CipherAlgorithm.AES, bytes(32));
        FieldCipher fc = FieldCipher.create(key, CipherSuite.AES_GCM, true);
        byte[] keyIdBytes = org.bouncycastle.util.encoders.Hex.decode("89d6d529a2fe31ddae603cb35458dcc0");
        for (byte[] env : new byte[][] {fc.encrypt(INT32, new byte[] {1, 0, 0, 0}, CONTEXT),
                fc.encryptLegacyV1(INT32, new byte[] {1, 0, 0, 0})}) {
            assertEquals(0x41, env[1] & 0xff, "AES-GCM, deterministic");
            assertArrayEquals(keyIdBytes, Arrays.copyOfRange(env, 2, 18), "key id in RFC 4122 byte order");
            assertEquals(INT32, env[18]);
            assertEquals(19 + 12 + 4 + 16, env.length);
        }
        assertEquals(0x82, fc.encrypt(INT32, new byte[] {1, 0, 0, 0}, CONTEXT)[0] & 0xff, "v2 is written");
        assertEquals(0x81, fc.encryptLegacyV1(INT32, new byte[] {1, 0, 0, 0})[0] & 0xff, "legacy is v1");
        byte[] tdes = FieldCipher.create(key(CipherAlgorithm.TRIPLE_DES, 24), CipherSuite.TDES_CBC_HMAC, false)
                .encrypt(STRING, new byte[] {1, 0, 0, 0, 0}, CONTEXT);
        assertEquals(0x82, tdes[0] & 0xff);
        assertEquals(0x15, tdes[1] & 0xff, "3DES-CBC-HMAC, random");
        assertEquals(19 + 8 + 8 + 16, tdes.length, "8-byte IV, one 8-byte block, 16-byte tag");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("suitesAndVariants")
    void v2IsWrittenWithFormatByte0x82(CipherSuite suite, boolean det) {
        FieldCipher fc = cipher(suite, det);
        for (int len : new int[] {0, 1, 16, 33}) {
            byte[] env = fc.encrypt(STRING, bytes(len), CONTEXT);
            assertEquals(0x82, env[0] & 0xff);
            assertEquals(suite.id() | (det ? 0x40 : 0), env[1] & 0xff);
            assertTrue(Envelope.isEnvelope(env));
            assertEquals(0x81, fc.encryptLegacyV1(STRING, bytes(len))[0] & 0xff);
        }
    }

    @Test
    void theContextIsNamespaceNulPathNul() {
        assertArrayEquals("hr.people\0ssn\0".getBytes(StandardCharsets.UTF_8), CONTEXT);
        assertArrayEquals("hr.people\0address.street\0".getBytes(StandardCharsets.UTF_8),
                Envelope.context("hr.people", "address.street"));
        assertArrayEquals(new byte[] {'d', '.', (byte) 0xc3, (byte) 0xa9, 0, (byte) 0xec, (byte) 0x84, (byte) 0xb8, 0},
                Envelope.context("d.é", "세"), "UTF-8");
        assertThrows(IllegalArgumentException.class, () -> Envelope.context("hr.people\0x", "ssn"));
        assertThrows(IllegalArgumentException.class, () -> Envelope.context("hr.people", "s\0sn"));
    }

    /** Contexts that are not CONTEXT: other namespaces, other paths, and every one-byte change. */
    private static List<byte[]> otherContexts() {
        List<byte[]> out = new ArrayList<>();
        out.add(Envelope.context("hr.staff", "ssn"));
        out.add(Envelope.context("hr2.people", "ssn"));
        out.add(Envelope.context("hr.people", "ssn2"));
        out.add(Envelope.context("hr.people", "address.street"));
        out.add(Envelope.context("hr.peoplessn", ""));
        out.add(Envelope.context("hr.people.ssn", ""));
        out.add(Envelope.context("hr", "people.ssn"));
        out.add(new byte[0]);
        out.add(Arrays.copyOf(CONTEXT, CONTEXT.length - 1));
        out.add(Arrays.copyOf(CONTEXT, CONTEXT.length + 1));
        out.add(Arrays.copyOfRange(CONTEXT, 1, CONTEXT.length));
        for (int i = 0; i < CONTEXT.length; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                byte[] c = CONTEXT.clone();
                c[i] ^= (byte) bit;
                out.add(c);
            }
        }
        return out;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("suitesAndVariants")
    void aV2EnvelopeOpensOnlyInItsContext(CipherSuite suite, boolean det) {
        FieldCipher fc = cipher(suite, det);
        FieldCipher other = FieldCipher.create(fc.key(), suite, !det);
        byte[] value = bytes(21);
        byte[] env = fc.encrypt(STRING, value, CONTEXT);
        assertArrayEquals(value, fc.decrypt(env, CONTEXT).value());
        assertArrayEquals(value, fc.decrypt(env, CONTEXT.clone()).value(), "an equal context, another array");
        for (byte[] c : otherContexts()) {
            String what = suite + " " + variant(det) + " in context " + Arrays.toString(c);
            DecryptionFailedException e = assertThrows(DecryptionFailedException.class, () -> fc.decrypt(env, c), what);
            assertEquals("decryption failed", e.getMessage());
            assertThrows(DecryptionFailedException.class, () -> other.decrypt(env, c), what);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("suitesAndVariants")
    void v1EnvelopesStillOpenInAnyContext(CipherSuite suite, boolean det) {
        FieldCipher fc = cipher(suite, det);
        FieldCipher other = FieldCipher.create(fc.key(), suite, !det);
        for (int len : new int[] {0, 1, 15, 16, 17, 40}) {
            byte[] value = bytes(len);
            byte[] v1 = fc.encryptLegacyV1(INT32, value);
            assertEquals(0x81, v1[0] & 0xff);
            assertEquals(suite.id() | (det ? 0x40 : 0), v1[1] & 0xff);
            List<byte[]> contexts = new ArrayList<>(otherContexts());
            contexts.add(CONTEXT);
            for (byte[] c : contexts) {
                FieldCipher.Plaintext back = fc.decrypt(v1, c);
                assertEquals(INT32, back.bsonType());
                assertArrayEquals(value, back.value());
                assertArrayEquals(value, other.decrypt(v1, c).value(), "either variant's cipher opens v1");
            }
            assertEquals(det, Arrays.equals(v1, fc.encryptLegacyV1(INT32, value)),
                    "v1 deterministic envelopes repeat, random ones do not");
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("suitesAndVariants")
    void theFormatByteCannotBeSwapped(CipherSuite suite, boolean det) {
        FieldCipher fc = cipher(suite, det);
        byte[] value = bytes(30);
        List<byte[]> contexts = new ArrayList<>(otherContexts());
        contexts.add(CONTEXT);

        byte[] v1 = fc.encryptLegacyV1(STRING, value);
        byte[] v1as2 = v1.clone();
        v1as2[0] = (byte) 0x82;
        for (byte[] c : contexts) {
            assertThrows(DecryptionFailedException.class, () -> fc.decrypt(v1as2, c),
                    "a v1 envelope relabelled v2, context " + Arrays.toString(c));
        }

        byte[] v2 = fc.encrypt(STRING, value, CONTEXT);
        byte[] v2as1 = v2.clone();
        v2as1[0] = (byte) 0x81;
        for (byte[] c : contexts) {
            assertThrows(DecryptionFailedException.class, () -> fc.decrypt(v2as1, c),
                    "a v2 envelope relabelled v1, context " + Arrays.toString(c));
        }
        // Through Envelopes too, which reads the header itself.
        Envelopes envelopes = new Envelopes();
        Envelopes.KeyLookup keys = id -> fc.key();
        assertThrows(DecryptionFailedException.class, () -> envelopes.open(v1as2, 0, v1as2.length, CONTEXT, keys));
        assertThrows(DecryptionFailedException.class, () -> envelopes.open(v2as1, 0, v2as1.length, CONTEXT, keys));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("suitesAndVariants")
    void everyFlippedBitAndEveryTruncationFailsAsDecryptionFailed(CipherSuite suite, boolean det) {
        FieldCipher fc = cipher(suite, det);
        byte[] value = bytes(37);
        byte[] v2 = fc.encrypt(STRING, value, CONTEXT);
        byte[] v1 = fc.encryptLegacyV1(STRING, value);
        for (byte[] env : new byte[][] {v2, v1}) {
            String what = suite + " " + variant(det) + " v" + (env[0] & 0x0f);
            for (int i = 0; i < env.length; i++) {
                for (int bit = 0; bit < 8; bit++) {
                    byte[] t = env.clone();
                    t[i] ^= (byte) (1 << bit);
                    DecryptionFailedException e = assertThrows(DecryptionFailedException.class,
                            () -> fc.decrypt(t, CONTEXT), what + " byte " + i + " bit " + bit);
                    assertEquals("decryption failed", e.getMessage());
                }
                for (byte b : new byte[] {0x00, (byte) 0xff}) {
                    byte[] t = env.clone();
                    if (t[i] != b) {
                        t[i] = b;
                        assertThrows(DecryptionFailedException.class, () -> fc.decrypt(t, CONTEXT),
                                what + " byte " + i + " set to " + b);
                    }
                }
            }
            for (int len = 0; len < env.length; len++) {
                byte[] t = Arrays.copyOf(env, len);
                assertThrows(DecryptionFailedException.class, () -> fc.decrypt(t, CONTEXT), what + " truncated to " + len);
            }
            byte[] longer = Arrays.copyOf(env, env.length + 1);
            assertThrows(DecryptionFailedException.class, () -> fc.decrypt(longer, CONTEXT), what + " one byte appended");
            assertArrayEquals(value, fc.decrypt(env, CONTEXT).value(), what + " untouched");
        }
    }

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void theWrongKeyOrSuiteFailsTheSameWay(CipherSuite suite) {
        CipherAlgorithm alg = suite.algorithm();
        int len = largestKey(alg);
        DataKey key = key(alg, len);
        byte[] env = FieldCipher.create(key, suite, false).encrypt(STRING, bytes(20), CONTEXT);
        byte[] v1 = FieldCipher.create(key, suite, false).encryptLegacyV1(STRING, bytes(20));

        for (byte[] e : new byte[][] {env, v1}) {
            // Same key id, other material: a key mix-up in the KMS.
            DataKey impostor = new DataKey(key.id(), alg, bytes(len));
            assertThrows(DecryptionFailedException.class,
                    () -> FieldCipher.create(impostor, suite, false).decrypt(e, CONTEXT));
            // Another key altogether.
            assertThrows(DecryptionFailedException.class,
                    () -> FieldCipher.create(key(alg, len), suite, false).decrypt(e, CONTEXT));
            // The other construction of the same algorithm, where there is one.
            for (CipherSuite other : CipherSuite.values()) {
                if (other != suite && other.algorithm() == alg) {
                    assertThrows(DecryptionFailedException.class,
                            () -> FieldCipher.create(key, other, false).decrypt(e, CONTEXT));
                }
            }
        }
        for (int format : new int[] {0x00, 0x01, 0x02, 0x7f, 0x80, 0x83, 0xc1, 0xc2, 0xff}) {
            byte[] t = env.clone();
            t[0] = (byte) format;
            assertThrows(DecryptionFailedException.class, () -> Envelope.parse(t), "format byte " + format);
            assertFalse(Envelope.isEnvelope(t), "format byte " + format);
            assertThrows(DecryptionFailedException.class, () -> FieldCipher.create(key, suite, false).decrypt(t, CONTEXT),
                    "format byte " + format);
        }
        for (int id : new int[] {0x00, 0x04, 0x13, 0x16, 0x7f, 0x81 | suite.id(), 0x80 | suite.id()}) {
            byte[] t = env.clone();
            t[1] = (byte) id;
            assertThrows(DecryptionFailedException.class,
                    () -> FieldCipher.create(key, suite, false).decrypt(t, CONTEXT), "suite byte " + id);
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
        byte[] a = det.encrypt(STRING, value, CONTEXT);
        byte[] b = det.encrypt(STRING, value.clone(), CONTEXT.clone());
        assertArrayEquals(a, b, "same value, key, type and context");
        assertArrayEquals(a, FieldCipher.create(key, suite, true).encrypt(STRING, value, Envelope.context("hr.people", "ssn")),
                "another cipher for the same key");
        // Repeated many times in a row: the ciphers' nonce-reuse guards must not get in the way.
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(a, det.encrypt(STRING, value, CONTEXT));
            assertArrayEquals(value, det.decrypt(a, CONTEXT).value());
        }
        assertFalse(Arrays.equals(a, det.encrypt(INT32, value, CONTEXT)), "another BSON type");
        assertFalse(Arrays.equals(a, FieldCipher.create(key(alg, largestKey(alg)), suite, true).encrypt(STRING, value, CONTEXT)),
                "another key");
        byte[] other = value.clone();
        other[24] ^= 1;
        assertFalse(Arrays.equals(a, det.encrypt(STRING, other, CONTEXT)), "another value");

        FieldCipher random = FieldCipher.create(key, suite, false);
        assertFalse(Arrays.equals(random.encrypt(STRING, value, CONTEXT), random.encrypt(STRING, value, CONTEXT)),
                "random variant");
        assertArrayEquals(value, random.decrypt(a, CONTEXT).value(), "either variant's cipher decrypts both");
        assertArrayEquals(value, det.decrypt(random.encrypt(STRING, value, CONTEXT), CONTEXT).value());
    }

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void deterministicEnvelopesDifferBetweenFieldsAndNamespaces(CipherSuite suite) {
        FieldCipher det = cipher(suite, true);
        byte[] value = bytes(25);
        byte[] a = det.encrypt(STRING, value, CONTEXT);
        byte[][] elsewhere = {
            Envelope.context("hr.people", "taxId"),          // another field, same namespace
            Envelope.context("hr.people", "address.street"),
            Envelope.context("hr.staff", "ssn"),             // same field, another collection
            Envelope.context("payroll.people", "ssn"),       // same field, another database
        };
        List<byte[]> seen = new ArrayList<>();
        seen.add(a);
        for (byte[] c : elsewhere) {
            byte[] e = det.encrypt(STRING, value, c);
            assertArrayEquals(e, det.encrypt(STRING, value, c), "still deterministic in " + Arrays.toString(c));
            for (byte[] s : seen) {
                assertFalse(Arrays.equals(s, e), suite + ": equal envelopes in two places");
                assertFalse(Arrays.equals(Arrays.copyOfRange(s, 19, 19 + suite.nonceLength()),
                        Arrays.copyOfRange(e, 19, 19 + suite.nonceLength())), suite + ": equal nonces in two places");
            }
            seen.add(e);
            assertArrayEquals(value, det.decrypt(e, c).value());
            assertThrows(DecryptionFailedException.class, () -> det.decrypt(e, CONTEXT));
            assertThrows(DecryptionFailedException.class, () -> det.decrypt(a, c));
        }
        // v1 had no context: its deterministic envelopes were equal everywhere, which v2 ends.
        assertArrayEquals(det.encryptLegacyV1(STRING, value), det.encryptLegacyV1(STRING, value.clone()));
        assertFalse(Arrays.equals(Arrays.copyOfRange(a, 1, a.length),
                Arrays.copyOfRange(det.encryptLegacyV1(STRING, value), 1, a.length)), "v1 and v2 differ past the format byte");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("suitesAndVariants")
    void envelopesOpensInsideALargerBufferWithTheContextAsASlice(CipherSuite suite, boolean det) {
        FieldCipher fc = cipher(suite, det);
        byte[] value = bytes(19);
        byte[] env = fc.encrypt(INT32, value, CONTEXT);
        byte[] buf = new byte[env.length + 13];
        RANDOM.nextBytes(buf);
        System.arraycopy(env, 0, buf, 7, env.length);
        byte[] ctxBuf = new byte[CONTEXT.length + 9];
        RANDOM.nextBytes(ctxBuf);
        System.arraycopy(CONTEXT, 0, ctxBuf, 5, CONTEXT.length);

        Envelopes envelopes = new Envelopes();
        Envelopes.KeyLookup keys = id -> id.equals(fc.key().id()) ? fc.key() : null;
        FieldCipher.Plaintext p = envelopes.open(buf, 7, env.length, CONTEXT, keys);
        assertEquals(INT32, p.bsonType());
        assertArrayEquals(value, p.value());
        Envelopes.Opener opener = envelopes.opener(keys);
        assertArrayEquals(value, opener.open(buf, 7, env.length, ctxBuf, 5, CONTEXT.length).value());
        for (byte[] c : otherContexts()) {
            assertThrows(DecryptionFailedException.class, () -> envelopes.open(buf, 7, env.length, c, keys));
        }
        assertThrows(DecryptionFailedException.class, () -> opener.open(buf, 7, env.length, ctxBuf, 4, CONTEXT.length));
        assertThrows(DecryptionFailedException.class, () -> opener.open(buf, 7, env.length, ctxBuf, 5, CONTEXT.length - 1));

        byte[] v1 = fc.encryptLegacyV1(INT32, value);
        assertArrayEquals(value, envelopes.open(v1, 0, v1.length, Envelope.context("any.where", "x"), keys).value());

        // An unknown key id: not known yet, so null (the caller waits), not a failure.
        byte[] stranger = FieldCipher.create(key(suite.algorithm(), largestKey(suite.algorithm())), suite, det)
                .encrypt(INT32, value, CONTEXT);
        assertNull(envelopes.open(stranger, 0, stranger.length, CONTEXT, keys));
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
                byte[] context = Envelope.context("db.c" + t, "f" + t);
                jobs.add(pool.submit(() -> {
                    for (int i = 0; i < 500; i++) {
                        byte[] v = bytes(i % 90);
                        assertArrayEquals(v, random.decrypt(random.encrypt(STRING, v, context), context).value());
                        byte[] e1 = det.encrypt(STRING, v, context);
                        assertArrayEquals(e1, det.encrypt(STRING, v, context));
                        assertArrayEquals(v, det.decrypt(e1, context).value());
                        assertArrayEquals(v, det.decrypt(det.encryptLegacyV1(STRING, v), context).value());
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
