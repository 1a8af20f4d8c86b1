package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.util.encoders.Hex;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Known-answer vectors from the ciphers' standards, through the engines the suites use. */
class BlockCipherVectorsTest {

    @ParameterizedTest(name = "{0} {4}")
    @CsvSource({
        // ARIA, RFC 5794 appendix A
        "ARIA, 000102030405060708090a0b0c0d0e0f, 00112233445566778899aabbccddeeff, d718fbd6ab644c739da95f3be6451778, RFC 5794 A.1",
        "ARIA, 000102030405060708090a0b0c0d0e0f1011121314151617, 00112233445566778899aabbccddeeff, 26449c1805dbe7aa25a468ce263a9e79, RFC 5794 A.2",
        "ARIA, 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f, 00112233445566778899aabbccddeeff, f92bd7c79fb72e2f2b8f80c1972d24fc, RFC 5794 A.3",
        // SEED, RFC 4269 appendix B
        "SEED, 00000000000000000000000000000000, 000102030405060708090a0b0c0d0e0f, 5ebac6e0054e166819aff1cc6d346cdb, RFC 4269 B.1",
        "SEED, 000102030405060708090a0b0c0d0e0f, 00000000000000000000000000000000, c11f22f20140505084483597e4370f43, RFC 4269 B.2",
        "SEED, 4706480851e61be85d74bfb3fd956185, 83a2f8a288641fb9a4e9a5cc2f131c7d, ee54d13ebcae706d226bc3142cd40d4a, RFC 4269 B.3",
        "SEED, 28dbc3bc49ffd87dcfa509b11d422be7, b41e6be2eba84a148e2eed84593c5ec7, 9b9b7bfcd1813cb95d0b3618f40f5122, RFC 4269 B.4",
        // LEA, KS X 3246 (TTAS.KO-12.0223) test vectors
        "LEA, 0f1e2d3c4b5a69788796a5b4c3d2e1f0, 101112131415161718191a1b1c1d1e1f, 9fc84e3528c6c6185532c7a704648bfd, LEA-128",
        "LEA, 0f1e2d3c4b5a69788796a5b4c3d2e1f0f0e1d2c3b4a59687, 202122232425262728292a2b2c2d2e2f, 6fb95e325aad1b878cdcf5357674c6f2, LEA-192",
        "LEA, 0f1e2d3c4b5a69788796a5b4c3d2e1f0f0e1d2c3b4a5968778695a4b3c2d1e0f, 303132333435363738393a3b3c3d3e3f, d651aff647b189c13a8900ca27f9e197, LEA-256",
        // DES-EDE3, NIST SP 800-67 example ("The qufck brown fox jump", three independent keys)
        "TRIPLE_DES, 0123456789abcdef23456789abcdef01456789abcdef0123, 54686520717566636b2062726f776e20666f78206a756d70, a826fd8ce53b855fcce21c8112256fe668d5c05dd9b6b900, SP 800-67",
    })
    void engineMatchesTheStandard(CipherAlgorithm algorithm, String key, String plaintext, String ciphertext, String source) {
        byte[] k = Hex.decode(key);
        byte[] pt = Hex.decode(plaintext);
        byte[] ct = Hex.decode(ciphertext);
        BlockCipher enc = Ciphers.engines(algorithm).get();
        enc.init(true, new KeyParameter(k));
        BlockCipher dec = Ciphers.engines(algorithm).get();
        dec.init(false, new KeyParameter(k));
        int bs = enc.getBlockSize();
        byte[] out = new byte[pt.length];
        byte[] back = new byte[pt.length];
        for (int i = 0; i < pt.length; i += bs) {
            enc.processBlock(pt, i, out, i);
            dec.processBlock(ct, i, back, i);
        }
        assertArrayEquals(ct, out, source + " encrypt");
        assertArrayEquals(pt, back, source + " decrypt");
    }
}
