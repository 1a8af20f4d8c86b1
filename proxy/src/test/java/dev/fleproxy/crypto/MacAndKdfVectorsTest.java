package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.charset.StandardCharsets;
import org.bouncycastle.util.encoders.Hex;
import org.junit.jupiter.api.Test;

/** HMAC-SHA-256 (RFC 4231) and HKDF-SHA-256 (RFC 5869) as the suites compute them. */
class MacAndKdfVectorsTest {

    private static byte[] hmac(byte[] key, byte[] data) {
        HmacSha256 h = new HmacSha256(key);
        var mac = h.mac();
        mac.update(data);
        byte[] out = new byte[HmacSha256.LENGTH];
        HmacSha256.finish(mac, out, 0);
        return out;
    }

    @Test
    void rfc4231() {
        byte[] key1 = new byte[20];
        java.util.Arrays.fill(key1, (byte) 0x0b);
        assertArrayEquals(Hex.decode("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
                hmac(key1, "Hi There".getBytes(StandardCharsets.US_ASCII)), "test case 1");
        assertArrayEquals(Hex.decode("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
                hmac("Jefe".getBytes(StandardCharsets.US_ASCII),
                        "what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII)), "test case 2");
        byte[] key3 = new byte[20];
        java.util.Arrays.fill(key3, (byte) 0xaa);
        byte[] data3 = new byte[50];
        java.util.Arrays.fill(data3, (byte) 0xdd);
        assertArrayEquals(Hex.decode("773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
                hmac(key3, data3), "test case 3");
    }

    @Test
    void rfc5869() {
        byte[] ikm = new byte[22];
        java.util.Arrays.fill(ikm, (byte) 0x0b);
        assertArrayEquals(Hex.decode("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
                Hkdf.sha256(ikm, Hex.decode("000102030405060708090a0b0c"), Hex.decode("f0f1f2f3f4f5f6f7f8f9"), 42),
                "test case 1");
        // Test case 3: empty salt and info, the form the envelope's subkeys use.
        assertArrayEquals(Hex.decode("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
                Hkdf.sha256(ikm, new byte[0], new byte[0], 42), "test case 3");
    }
}
