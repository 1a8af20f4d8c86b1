package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Random;
import org.bouncycastle.crypto.engines.ARIAEngine;
import org.bouncycastle.crypto.params.KeyParameter;
import org.junit.jupiter.api.Test;

/**
 * Our word-oriented ARIA against Bouncy Castle's byte-oriented one on random keys and blocks of
 * every key size, both directions (the RFC 5794 vectors are in BlockCipherVectorsTest).
 */
class AriaEngineTest {

    @Test
    void agreesWithBouncyCastleOnRandomInputs() {
        Random r = new Random(5794);
        for (int keyLength : new int[] {16, 24, 32}) {
            for (int i = 0; i < 300; i++) {
                byte[] key = new byte[keyLength];
                byte[] block = new byte[16];
                r.nextBytes(key);
                r.nextBytes(block);
                for (boolean encrypt : new boolean[] {true, false}) {
                    AriaEngine ours = new AriaEngine();
                    ours.init(encrypt, new KeyParameter(key));
                    ARIAEngine theirs = new ARIAEngine();
                    theirs.init(encrypt, new KeyParameter(key));
                    byte[] a = new byte[16];
                    byte[] b = new byte[16];
                    ours.processBlock(block, 0, a, 0);
                    theirs.processBlock(block, 0, b, 0);
                    assertArrayEquals(b, a, (encrypt ? "encrypt" : "decrypt") + " with a " + keyLength * 8 + "-bit key");
                }
            }
        }
    }
}
