package dev.fleproxy.crypto;

import java.util.function.Supplier;
import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.engines.DESedeEngine;
import org.bouncycastle.crypto.engines.LEAEngine;
import org.bouncycastle.crypto.engines.SEEDEngine;

/**
 * Which implementation serves which cipher: the JDK for AES (AES-NI, carry-less multiply),
 * Bouncy Castle engines for LEA, SEED and DES-EDE3, our word-oriented {@link AriaEngine} for ARIA
 * (Bouncy Castle's reached about 0.4× OpenSSL here).
 */
public final class Ciphers {
    private Ciphers() {
    }

    /** A fresh Bouncy Castle engine for a non-AES algorithm (one per thread and direction). */
    public static Supplier<BlockCipher> engines(CipherAlgorithm algorithm) {
        return switch (algorithm) {
            case ARIA -> AriaEngine::new;
            case LEA -> LEAEngine::new;
            case SEED -> SEEDEngine::new;
            case TRIPLE_DES -> DESedeEngine::new;
            case AES -> throw new IllegalArgumentException("AES is served by the JDK");
        };
    }

    /** Raw CBC-PKCS#7 under key K (the inner half of CBC-HMAC; also what OpenSSL's `enc` computes). */
    static CbcCipher cbc(CipherAlgorithm algorithm, byte[] key) {
        return algorithm == CipherAlgorithm.AES ? new JceAesCbc(key) : new BcCbc(engines(algorithm), key);
    }

    /** The suite's construction with caller-given nonces (which may repeat, for the deterministic variant). */
    static NonceAead nonceAead(CipherSuite suite, byte[] key, int format) {
        return nonceAead(suite, key, true, format);
    }

    static NonceAead nonceAead(CipherSuite suite, byte[] key, boolean repeatsNonces, int format) {
        CipherAlgorithm alg = suite.algorithm();
        if (suite.construction() == CipherSuite.Construction.GCM) {
            return alg == CipherAlgorithm.AES ? new JceAesGcm(key, repeatsNonces) : new CtrGcm(engines(alg), key);
        }
        return new CbcHmac(cbc(alg, key), Hkdf.macKey(key, format), suite.nonceLength());
    }

    /**
     * The suite's AEAD under this key, random or deterministic, with the subkeys of this envelope
     * format ({@link Envelope#FORMAT_V1} or {@link Envelope#FORMAT_V2}). The key's algorithm must
     * be the suite's: a mismatch is a configuration error, reported here.
     */
    public static Aead aead(DataKey key, CipherSuite suite, boolean deterministic, int format) {
        if (key.algorithm() != suite.algorithm()) {
            throw new CryptoException("suite " + suite + " needs a " + suite.algorithm() + " key, but key "
                    + key.id() + " is " + key.algorithm());
        }
        byte[] k = key.material();
        NonceSource nonces = deterministic ? NonceSource.deterministic(Hkdf.detKey(k, format)) : NonceSource.RANDOM;
        return new SuiteAead(suite, nonceAead(suite, k, deterministic, format), nonces);
    }
}
