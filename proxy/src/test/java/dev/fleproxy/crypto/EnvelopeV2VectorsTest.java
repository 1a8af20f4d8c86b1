package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.BufferedBlockCipher;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.engines.ARIAEngine;
import org.bouncycastle.crypto.engines.DESedeEngine;
import org.bouncycastle.crypto.engines.LEAEngine;
import org.bouncycastle.crypto.engines.SEEDEngine;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.macs.HMac;
import org.bouncycastle.crypto.modes.CBCBlockCipher;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.modes.GCMModeCipher;
import org.bouncycastle.crypto.paddings.PKCS7Padding;
import org.bouncycastle.crypto.paddings.PaddedBufferedBlockCipher;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.HKDFParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.crypto.params.ParametersWithIV;
import org.bouncycastle.util.encoders.Hex;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The committed v2 vectors (src/test/resources/vectors/envelope-v2.json) checked against
 * docs/envelope-format.md by a second implementation: Bouncy Castle's low-level classes (block cipher
 * engines, GCM and CBC modes, PKCS#7, HKDF, HMAC) and this class's own reading of the layout.
 *
 * <p>The independent part (everything down to the "the code agrees" section) uses no type of
 * dev.fleproxy.crypto: only Bouncy Castle, org.bson (to read JSON) and the JDK. The code under
 * test appears only in the methods of that last section, always by its fully qualified name.
 */
class EnvelopeV2VectorsTest {

    // ===================================================================================
    // The independent part: docs/envelope-format.md written out again, with Bouncy Castle only.
    // ===================================================================================

    static final int FORMAT_V2 = 0x82;
    static final int DETERMINISTIC = 0x40;
    static final int HEADER = 19;
    static final int TAG = 16;
    static final byte[] MAC_INFO_V2 = "mongo-fle-proxy/v2/mac".getBytes(StandardCharsets.US_ASCII);
    static final byte[] DET_INFO_V2 = "mongo-fle-proxy/v2/det".getBytes(StandardCharsets.US_ASCII);
    static final byte[] MAC_INFO_V1 = "mongo-fle-proxy/v1/mac".getBytes(StandardCharsets.US_ASCII);

    /** A row of docs/envelope-format.md's suite table: id, construction, block cipher, nonce/IV length n. */
    record Suite(int id, boolean gcm, Supplier<BlockCipher> engine, int n, int blockSize, int[] keyLengths) {
    }

    static final Map<String, Suite> SUITES = Map.of(
            "AES-GCM", new Suite(0x01, true, AESEngine::newInstance, 12, 16, new int[] {16, 24, 32}),
            "ARIA-GCM", new Suite(0x02, true, ARIAEngine::new, 12, 16, new int[] {16, 24, 32}),
            "LEA-GCM", new Suite(0x03, true, LEAEngine::new, 12, 16, new int[] {16, 24, 32}),
            "AES-CBC-HMAC", new Suite(0x11, false, AESEngine::newInstance, 16, 16, new int[] {16, 24, 32}),
            "ARIA-CBC-HMAC", new Suite(0x12, false, ARIAEngine::new, 16, 16, new int[] {16, 24, 32}),
            "SEED-CBC-HMAC", new Suite(0x14, false, SEEDEngine::new, 16, 16, new int[] {16}),
            "3DES-CBC-HMAC", new Suite(0x15, false, DESedeEngine::new, 8, 8, new int[] {24}));

    /** One entry of the file. */
    record Vector(int id, String comment, String suiteName, boolean deterministic, byte[] key, String keyId,
                  String namespace, String field, byte[] context, int bsonType, byte[] value, byte[] envelope) {
        Suite suite() {
            Suite s = SUITES.get(suiteName);
            assertNotNull(s, "vector " + id + ": unknown suite " + suiteName);
            return s;
        }

        @Override
        public String toString() {
            return "#" + id + " " + comment;
        }
    }

    static List<Vector> vectors() throws IOException {
        try (InputStream in = EnvelopeV2VectorsTest.class.getResourceAsStream("/vectors/envelope-v2.json")) {
            assertNotNull(in, "vectors/envelope-v2.json is missing from the test resources");
            BsonDocument doc = BsonDocument.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            List<Vector> out = new ArrayList<>();
            for (BsonValue v : doc.getArray("vectors")) {
                BsonDocument d = v.asDocument();
                out.add(new Vector(d.getInt32("id").getValue(), d.getString("comment").getValue(),
                        d.getString("suite").getValue(), d.getBoolean("deterministic").getValue(),
                        Hex.decode(d.getString("keyHex").getValue()), d.getString("keyId").getValue(),
                        d.getString("namespace").getValue(), d.getString("field").getValue(),
                        Hex.decode(d.getString("contextHex").getValue()), d.getInt32("bsonType").getValue(),
                        Hex.decode(d.getString("valueHex").getValue()), Hex.decode(d.getString("envelopeHex").getValue())));
            }
            return out;
        }
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int o = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, o, p.length);
            o += p.length;
        }
        return out;
    }

    static byte[] hkdf(byte[] ikm, byte[] info) {
        HKDFBytesGenerator g = new HKDFBytesGenerator(new SHA256Digest());
        g.init(new HKDFParameters(ikm, new byte[0], info));
        byte[] out = new byte[32];
        g.generateBytes(out, 0, out.length);
        return out;
    }

    static byte[] hmacSha256(byte[] key, byte[]... parts) {
        HMac mac = new HMac(new SHA256Digest());
        mac.init(new KeyParameter(key));
        for (byte[] p : parts) {
            mac.update(p, 0, p.length);
        }
        byte[] out = new byte[mac.getMacSize()];
        mac.doFinal(out, 0);
        return out;
    }

    /** C = UTF-8(namespace) ‖ 0x00 ‖ UTF-8(field path) ‖ 0x00. */
    static byte[] context(String namespace, String field) {
        return concat(namespace.getBytes(StandardCharsets.UTF_8), new byte[1], field.getBytes(StandardCharsets.UTF_8),
                new byte[1]);
    }

    /** The 19-byte header, built from the vector's fields (not copied from its envelope). */
    static byte[] header(Vector v) {
        byte[] h = new byte[HEADER];
        h[0] = (byte) FORMAT_V2;
        h[1] = (byte) (v.suite().id() | (v.deterministic() ? DETERMINISTIC : 0));
        // The UUID's 16 bytes in RFC 4122 order, i.e. in the order of its text form's hex digits.
        byte[] id = Hex.decode(v.keyId().replace("-", ""));
        assertEquals(16, id.length);
        System.arraycopy(id, 0, h, 2, 16);
        h[18] = (byte) v.bsonType();
        return h;
    }

    /** GCM with a 128-bit tag: ciphertext ‖ tag. */
    static byte[] gcm(boolean encrypt, Suite s, byte[] key, byte[] nonce, byte[] aad, byte[] in)
            throws InvalidCipherTextException {
        GCMModeCipher gcm = GCMBlockCipher.newInstance(s.engine().get());
        gcm.init(encrypt, new AEADParameters(new KeyParameter(key), 128, nonce, aad));
        byte[] out = new byte[gcm.getOutputSize(in.length)];
        int n = gcm.processBytes(in, 0, in.length, out, 0);
        n += gcm.doFinal(out, n);
        return Arrays.copyOf(out, n);
    }

    /** CBC with PKCS#7 padding under K. */
    static byte[] cbc(boolean encrypt, Suite s, byte[] key, byte[] iv, byte[] in) throws InvalidCipherTextException {
        BufferedBlockCipher c = new PaddedBufferedBlockCipher(CBCBlockCipher.newInstance(s.engine().get()),
                new PKCS7Padding());
        c.init(encrypt, new ParametersWithIV(new KeyParameter(key), iv));
        byte[] out = new byte[c.getOutputSize(in.length)];
        int n = c.processBytes(in, 0, in.length, out, 0);
        n += c.doFinal(out, n);
        return Arrays.copyOf(out, n);
    }

    /** The first 16 bytes of HMAC-SHA-256(macKey, AAD ‖ IV ‖ ciphertext). */
    static byte[] cbcTag(byte[] macKey, byte[] aad, byte[] iv, byte[] ct) {
        return Arrays.copyOf(hmacSha256(macKey, aad, iv, ct), TAG);
    }

    /** nonce ‖ ciphertext ‖ tag for this nonce, as §3.2 says. */
    static byte[] seal(Vector v, byte[] nonce, byte[] aad) throws InvalidCipherTextException {
        Suite s = v.suite();
        if (s.gcm()) {
            return concat(nonce, gcm(true, s, v.key(), nonce, aad, v.value()));
        }
        byte[] ct = cbc(true, s, v.key(), nonce, v.value());
        return concat(nonce, ct, cbcTag(hkdf(v.key(), MAC_INFO_V2), aad, nonce, ct));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void independentlyVerified(Vector v) throws Exception {
        Suite s = v.suite();
        byte[] env = v.envelope();
        assertTrue(Arrays.stream(s.keyLengths()).anyMatch(l -> l == v.key().length), "key length for " + v.suiteName());

        // Context.
        assertArrayEquals(context(v.namespace(), v.field()), v.context(), "contextHex is C for namespace and field");

        // Header: format 0x82, suite byte with the 0x40 flag, key UUID, BSON type.
        assertTrue(env.length >= HEADER + s.n() + TAG, "length");
        assertEquals(FORMAT_V2, env[0] & 0xff, "format byte");
        assertEquals(s.id() | (v.deterministic() ? DETERMINISTIC : 0), env[1] & 0xff, "suite byte");
        assertArrayEquals(Hex.decode(v.keyId().replace("-", "")), Arrays.copyOfRange(env, 2, 18), "key id");
        assertEquals(v.bsonType(), env[18] & 0xff, "BSON type");
        assertArrayEquals(header(v), Arrays.copyOfRange(env, 0, HEADER));

        // Lengths: nonce n, ciphertext (padded for CBC), 16-byte tag.
        int body = s.gcm() ? v.value().length : (v.value().length / s.blockSize() + 1) * s.blockSize();
        assertEquals(HEADER + s.n() + body + TAG, env.length, "envelope length");

        byte[] headerBytes = Arrays.copyOfRange(env, 0, HEADER);
        byte[] aad = concat(headerBytes, v.context());
        byte[] nonce = Arrays.copyOfRange(env, HEADER, HEADER + s.n());
        byte[] ct = Arrays.copyOfRange(env, HEADER + s.n(), env.length - TAG);
        byte[] tag = Arrays.copyOfRange(env, env.length - TAG, env.length);
        byte[] ctAndTag = Arrays.copyOfRange(env, HEADER + s.n(), env.length);

        if (s.gcm()) {
            assertArrayEquals(v.value(), gcm(false, s, v.key(), nonce, aad, ctAndTag), "GCM decrypts to the value");
            // Not v1's AAD (the header alone), not another context.
            assertThrows(InvalidCipherTextException.class, () -> gcm(false, s, v.key(), nonce, headerBytes, ctAndTag),
                    "the context is authenticated");
            byte[] otherAad = concat(headerBytes, context(v.namespace(), v.field() + "x"));
            assertThrows(InvalidCipherTextException.class, () -> gcm(false, s, v.key(), nonce, otherAad, ctAndTag));
        } else {
            byte[] macKey = hkdf(v.key(), MAC_INFO_V2);
            assertArrayEquals(cbcTag(macKey, aad, nonce, ct), tag, "HMAC-SHA-256/128 over AAD ‖ IV ‖ ciphertext, v2 macKey");
            assertArrayEquals(v.value(), cbc(false, s, v.key(), nonce, ct), "CBC decrypts to the value");
            assertFalse(Arrays.equals(cbcTag(hkdf(v.key(), MAC_INFO_V1), aad, nonce, ct), tag), "not v1's macKey");
            assertFalse(Arrays.equals(cbcTag(macKey, headerBytes, nonce, ct), tag), "the context is in the tag");
        }

        // Everything after the nonce recomputed, for random entries too (their nonce taken as given).
        assertArrayEquals(env, concat(header(v), seal(v, nonce, concat(header(v), context(v.namespace(), v.field())))),
                "the envelope recomputed from its nonce");

        if (v.deterministic()) {
            // nonce/IV = first n bytes of HMAC-SHA-256(detKey, AAD ‖ plaintext), detKey from the v2 info.
            byte[] detKey = hkdf(v.key(), DET_INFO_V2);
            byte[] expectedNonce = Arrays.copyOf(hmacSha256(detKey, aad, v.value()), s.n());
            assertArrayEquals(expectedNonce, nonce, "deterministic nonce");
            // The whole envelope from nothing but K, the key id, the context, the type and the value.
            byte[] aadFromScratch = concat(header(v), context(v.namespace(), v.field()));
            byte[] nonceFromScratch = Arrays.copyOf(hmacSha256(detKey, aadFromScratch, v.value()), s.n());
            assertArrayEquals(env, concat(header(v), seal(v, nonceFromScratch, aadFromScratch)),
                    "the deterministic envelope recomputed byte for byte");
        }
    }

    @Test
    void theFileCoversEverySuiteAndVariantAndBothKeySizes() throws IOException {
        List<Vector> all = vectors();
        Set<String> seen = new HashSet<>();
        Set<String> keySizes = new HashSet<>();
        Set<Integer> ids = new HashSet<>();
        for (Vector v : all) {
            v.suite();
            assertTrue(ids.add(v.id()), "duplicate id " + v.id());
            seen.add(v.suiteName() + "/" + v.deterministic());
            keySizes.add(v.suiteName().split("-")[0] + "-" + v.key().length * 8);
        }
        for (String name : SUITES.keySet()) {
            assertTrue(seen.contains(name + "/false"), name + " random");
            assertTrue(seen.contains(name + "/true"), name + " deterministic");
        }
        for (String alg : new String[] {"AES", "ARIA", "LEA"}) {
            assertTrue(keySizes.contains(alg + "-128"), alg + "-128");
            assertTrue(keySizes.contains(alg + "-256"), alg + "-256");
        }
        assertTrue(all.size() >= 20, "about 20 vectors, found " + all.size());
    }

    @Test
    void deterministicEnvelopesOfOneValueDifferBetweenContexts() throws IOException {
        // Vectors with the same key, suite, type and value but another context must differ.
        List<Vector> det = vectors().stream().filter(Vector::deterministic).toList();
        int pairs = 0;
        for (int i = 0; i < det.size(); i++) {
            for (int j = i + 1; j < det.size(); j++) {
                Vector a = det.get(i);
                Vector b = det.get(j);
                if (a.suiteName().equals(b.suiteName()) && Arrays.equals(a.key(), b.key()) && a.bsonType() == b.bsonType()
                        && Arrays.equals(a.value(), b.value())) {
                    assertFalse(Arrays.equals(a.context(), b.context()), a + " and " + b + " are the same input");
                    assertFalse(Arrays.equals(a.envelope(), b.envelope()), a + " and " + b);
                    pairs++;
                }
            }
        }
        assertTrue(pairs >= 3, "the file has the same value in several places (found " + pairs + " pairs)");
        boolean otherField = false;
        boolean otherNamespace = false;
        for (Vector a : det) {
            for (Vector b : det) {
                if (a.suiteName().equals(b.suiteName()) && Arrays.equals(a.key(), b.key())
                        && Arrays.equals(a.value(), b.value())) {
                    otherField |= a.namespace().equals(b.namespace()) && !a.field().equals(b.field());
                    otherNamespace |= !a.namespace().equals(b.namespace()) && a.field().equals(b.field());
                }
            }
        }
        assertTrue(otherField, "one value in two fields of one namespace");
        assertTrue(otherNamespace, "one value in one field of two namespaces");
    }

    // ===================================================================================
    // The code agrees: FieldCipher and Envelopes open every vector and reproduce the
    // deterministic ones byte for byte, so a change of the format breaks this test.
    // ===================================================================================

    static final Map<String, dev.fleproxy.crypto.CipherSuite> CODE_SUITES = Map.of(
            "AES-GCM", dev.fleproxy.crypto.CipherSuite.AES_GCM,
            "ARIA-GCM", dev.fleproxy.crypto.CipherSuite.ARIA_GCM,
            "LEA-GCM", dev.fleproxy.crypto.CipherSuite.LEA_GCM,
            "AES-CBC-HMAC", dev.fleproxy.crypto.CipherSuite.AES_CBC_HMAC,
            "ARIA-CBC-HMAC", dev.fleproxy.crypto.CipherSuite.ARIA_CBC_HMAC,
            "SEED-CBC-HMAC", dev.fleproxy.crypto.CipherSuite.SEED_CBC_HMAC,
            "3DES-CBC-HMAC", dev.fleproxy.crypto.CipherSuite.TDES_CBC_HMAC);

    static dev.fleproxy.crypto.DataKey codeKey(Vector v) {
        return new dev.fleproxy.crypto.DataKey(java.util.UUID.fromString(v.keyId()),
                CODE_SUITES.get(v.suiteName()).algorithm(), v.key());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void theCodeOpensEveryVector(Vector v) {
        dev.fleproxy.crypto.CipherSuite suite = CODE_SUITES.get(v.suiteName());
        assertEquals(v.suite().id(), suite.id(), "the code's suite id");
        assertEquals(v.suite().n(), suite.nonceLength(), "the code's nonce length");
        assertArrayEquals(v.context(), dev.fleproxy.crypto.Envelope.context(v.namespace(), v.field()));
        dev.fleproxy.crypto.DataKey key = codeKey(v);
        for (boolean det : new boolean[] {v.deterministic(), !v.deterministic()}) {
            dev.fleproxy.crypto.FieldCipher fc = dev.fleproxy.crypto.FieldCipher.create(key, suite, det);
            dev.fleproxy.crypto.FieldCipher.Plaintext p = fc.decrypt(v.envelope(), v.context());
            assertEquals((byte) v.bsonType(), p.bsonType());
            assertArrayEquals(v.value(), p.value());
            assertThrows(dev.fleproxy.crypto.DecryptionFailedException.class,
                    () -> fc.decrypt(v.envelope(), context(v.namespace() + "2", v.field())));
            assertThrows(dev.fleproxy.crypto.DecryptionFailedException.class,
                    () -> fc.decrypt(v.envelope(), context(v.namespace(), v.field() + ".x")));
        }
        dev.fleproxy.crypto.Envelopes envelopes = new dev.fleproxy.crypto.Envelopes();
        dev.fleproxy.crypto.FieldCipher.Plaintext p = envelopes.open(v.envelope(), 0, v.envelope().length, v.context(),
                id -> id.equals(key.id()) ? key : null);
        assertNotNull(p);
        assertArrayEquals(v.value(), p.value());
        dev.fleproxy.crypto.Envelope.Header h = dev.fleproxy.crypto.Envelope.parse(v.envelope());
        assertEquals(dev.fleproxy.crypto.Envelope.FORMAT_V2, h.format());
        assertEquals(suite, h.suite());
        assertEquals(v.deterministic(), h.deterministic());
        assertEquals(key.id(), h.keyId());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void theCodeWritesTheSameEnvelopes(Vector v) {
        dev.fleproxy.crypto.FieldCipher fc = dev.fleproxy.crypto.FieldCipher.create(codeKey(v),
                CODE_SUITES.get(v.suiteName()), v.deterministic());
        byte[] context = dev.fleproxy.crypto.Envelope.context(v.namespace(), v.field());
        byte[] env = fc.encrypt((byte) v.bsonType(), v.value(), context);
        if (v.deterministic()) {
            assertArrayEquals(v.envelope(), env, "FieldCipher's deterministic envelope");
        } else {
            assertEquals(v.envelope().length, env.length);
            assertArrayEquals(Arrays.copyOf(v.envelope(), HEADER), Arrays.copyOf(env, HEADER), "header");
            assertFalse(Arrays.equals(v.envelope(), env), "a random nonce");
            assertArrayEquals(v.value(), fc.decrypt(env, context).value());
        }
    }
}
