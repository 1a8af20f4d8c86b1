package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.util.encoders.Hex;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Raw CBC-PKCS#7 (the cipher inside every CBC-HMAC suite) equals what the `openssl enc` CLI
 * computes for the same key, IV and plaintext: an independent implementation of each cipher.
 * Needs the openssl binary (installed by .ci/run); SEED needs OpenSSL's legacy provider.
 */
class OpenSslCbcCrossCheckTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int[] LENGTHS = {0, 1, 7, 8, 15, 16, 17, 31, 100, 1000};

    static byte[] openssl(String cipher, byte[] key, byte[] iv, byte[] plaintext, boolean legacy)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl", "enc", "-" + cipher, "-e", "-nosalt",
                "-K", Hex.toHexString(key), "-iv", Hex.toHexString(iv)));
        if (legacy) {
            cmd.addAll(List.of("-provider", "legacy", "-provider", "default"));
        }
        Process p = new ProcessBuilder(cmd).start();
        p.getOutputStream().write(plaintext);
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes());
        assertEquals(0, p.waitFor(), String.join(" ", cmd.subList(0, 3)) + " failed: " + err);
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "aes-128-cbc, AES, 16, false",
        "aes-192-cbc, AES, 24, false",
        "aes-256-cbc, AES, 32, false",
        "aria-128-cbc, ARIA, 16, false",
        "aria-192-cbc, ARIA, 24, false",
        "aria-256-cbc, ARIA, 32, false",
        "seed-cbc, SEED, 16, true",
        "des-ede3-cbc, TRIPLE_DES, 24, false",
    })
    void ourCbcEqualsOpenSsl(String opensslName, CipherAlgorithm algorithm, int keyLength, boolean legacy)
            throws Exception {
        for (int len : LENGTHS) {
            byte[] key = new byte[keyLength];
            byte[] iv = new byte[algorithm.blockSize()];
            byte[] pt = new byte[len];
            RANDOM.nextBytes(key);
            RANDOM.nextBytes(iv);
            RANDOM.nextBytes(pt);
            CbcCipher cbc = Ciphers.cbc(algorithm, key);
            int bs = algorithm.blockSize();
            byte[] ours = new byte[len + bs - len % bs];
            assertEquals(ours.length, cbc.encrypt(iv, 0, pt, 0, len, ours, 0));
            assertArrayEquals(openssl(opensslName, key, iv, pt, legacy), ours, opensslName + " of " + len + " bytes");
            assertArrayEquals(pt, cbc.decrypt(iv, 0, ours, 0, ours.length));
        }
    }
}
