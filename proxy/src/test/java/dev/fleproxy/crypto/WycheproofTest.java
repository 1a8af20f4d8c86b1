package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.util.encoders.Hex;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Wycheproof vectors (shipped in test resources) against the primitives the suites are built
 * from: GCM with 96-bit nonces and 128-bit tags, CBC-PKCS#7, HMAC-SHA-256, HKDF-SHA-256.
 * "valid" cases must match byte for byte; "invalid" ones must fail to decrypt.
 */
class WycheproofTest {

    record Case(BsonDocument group, BsonDocument test) {
        byte[] hex(String field) {
            return Hex.decode(test.getString(field).getValue());
        }

        boolean valid() {
            return !test.getString("result").getValue().equals("invalid");
        }

        String id() {
            return "tcId " + test.getInt32("tcId").getValue() + " (" + test.getString("comment").getValue() + ")";
        }
    }

    static List<Case> cases(String file) throws IOException {
        try (InputStream in = WycheproofTest.class.getResourceAsStream("/wycheproof/" + file)) {
            BsonDocument doc = BsonDocument.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            List<Case> out = new ArrayList<>();
            for (BsonValue g : doc.getArray("testGroups")) {
                BsonArray tests = g.asDocument().getArray("tests");
                for (BsonValue t : tests) {
                    out.add(new Case(g.asDocument(), t.asDocument()));
                }
            }
            return out;
        }
    }

    private static CipherAlgorithm algorithmOf(String file) {
        return file.startsWith("aes") ? CipherAlgorithm.AES : CipherAlgorithm.ARIA;
    }

    private int gcm(String file, CipherSuite suite) throws IOException {
        return gcm(file, key -> Ciphers.nonceAead(suite, key, Envelope.FORMAT_V2));
    }

    private int gcm(String file, java.util.function.Function<byte[], NonceAead> factory) throws IOException {
        int checked = 0;
        for (Case c : cases(file)) {
            if (c.group().getInt32("ivSize").getValue() != 96 || c.group().getInt32("tagSize").getValue() != 128) {
                continue; // the format fixes 12-byte nonces and 16-byte tags
            }
            NonceAead gcm = factory.apply(c.hex("key"));
            byte[] iv = c.hex("iv");
            byte[] aad = c.hex("aad");
            byte[] msg = c.hex("msg");
            byte[] ctTag = concat(c.hex("ct"), c.hex("tag"));
            if (c.valid()) {
                byte[] out = new byte[msg.length + 16];
                assertEquals(out.length, gcm.seal(iv, 0, aad, 0, aad.length, msg, 0, msg.length, out, 0));
                assertArrayEquals(ctTag, out, file + " " + c.id());
                assertArrayEquals(msg, gcm.open(iv, 0, aad, 0, aad.length, ctTag, 0, ctTag.length), file + " " + c.id());
            } else {
                assertThrows(DecryptionFailedException.class,
                        () -> gcm.open(iv, 0, aad, 0, aad.length, ctTag, 0, ctTag.length), file + " " + c.id());
            }
            checked++;
        }
        return checked;
    }

    private int cbc(String file) throws IOException {
        int checked = 0;
        for (Case c : cases(file)) {
            CbcCipher cbc = Ciphers.cbc(algorithmOf(file), c.hex("key"));
            byte[] iv = c.hex("iv");
            byte[] msg = c.hex("msg");
            byte[] ct = c.hex("ct");
            if (c.valid()) {
                byte[] out = new byte[msg.length + 16 - msg.length % 16];
                assertEquals(out.length, cbc.encrypt(iv, 0, msg, 0, msg.length, out, 0));
                assertArrayEquals(ct, out, file + " " + c.id());
                assertArrayEquals(msg, cbc.decrypt(iv, 0, ct, 0, ct.length), file + " " + c.id());
            } else {
                assertThrows(DecryptionFailedException.class, () -> cbc.decrypt(iv, 0, ct, 0, ct.length),
                        file + " " + c.id());
            }
            checked++;
        }
        return checked;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void aesGcm() throws IOException {
        assertTrue(gcm("aes_gcm_test.json", CipherSuite.AES_GCM) > 150);
    }

    @Test
    void ourGcmConstructionOverAesToo() throws IOException {
        // CtrGcm serves ARIA and LEA; over Bouncy Castle's AES it must also pass every AES-GCM vector.
        assertTrue(gcm("aes_gcm_test.json", key -> new CtrGcm(org.bouncycastle.crypto.engines.AESEngine::newInstance, key)) > 150);
    }

    @Test
    void ariaGcm() throws IOException {
        assertTrue(gcm("aria_gcm_test.json", CipherSuite.ARIA_GCM) > 150);
    }

    @Test
    void aesCbcPkcs7() throws IOException {
        assertEquals(216, cbc("aes_cbc_pkcs5_test.json"));
    }

    @Test
    void ariaCbcPkcs7() throws IOException {
        assertEquals(216, cbc("aria_cbc_pkcs5_test.json"));
    }

    @Test
    void hmacSha256() throws IOException {
        int checked = 0;
        for (Case c : cases("hmac_sha256_test.json")) {
            byte[] key = c.hex("key");
            byte[] msg = c.hex("msg");
            byte[] tag = c.hex("tag");
            HmacSha256 h = new HmacSha256(key);
            var mac = h.mac();
            mac.update(msg);
            byte[] full = new byte[HmacSha256.LENGTH];
            HmacSha256.finish(mac, full, 0);
            boolean match = ConstantTime.equals(full, 0, tag, 0, tag.length);
            assertEquals(c.valid(), match, c.id());
            checked++;
        }
        assertEquals(174, checked);
    }

    @Test
    void hkdfSha256() throws IOException {
        int checked = 0;
        for (Case c : cases("hkdf_sha256_test.json")) {
            int size = c.test().getInt32("size").getValue();
            if (!c.valid()) {
                // The only invalid cases ask for more than 255 × 32 bytes of output.
                assertTrue(size > 255 * 32, c.id());
                assertThrows(RuntimeException.class, () -> Hkdf.sha256(c.hex("ikm"), c.hex("salt"), c.hex("info"), size));
            } else {
                assertArrayEquals(c.hex("okm"), Hkdf.sha256(c.hex("ikm"), c.hex("salt"), c.hex("info"), size), c.id());
            }
            checked++;
        }
        assertEquals(86, checked);
    }
}
