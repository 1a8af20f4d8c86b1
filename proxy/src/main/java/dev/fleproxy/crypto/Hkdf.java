package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.params.HKDFParameters;

/** HKDF-SHA-256 (RFC 5869) and the two subkeys of each ciphertext format (docs/envelope-format.md, "Key derivation"). */
public final class Hkdf {
    static final String MAC_INFO_V1 = "mongo-fle-proxy/v1/mac";
    static final String DET_INFO_V1 = "mongo-fle-proxy/v1/det";
    static final String MAC_INFO_V2 = "mongo-fle-proxy/v2/mac";
    static final String DET_INFO_V2 = "mongo-fle-proxy/v2/det";
    static final int SUBKEY_LENGTH = 32;

    private Hkdf() {
    }

    public static byte[] sha256(byte[] ikm, byte[] salt, byte[] info, int length) {
        HKDFBytesGenerator hkdf = new HKDFBytesGenerator(new SHA256Digest());
        hkdf.init(new HKDFParameters(ikm, salt, info));
        byte[] out = new byte[length];
        hkdf.generateBytes(out, 0, length);
        return out;
    }

    /**
     * An HMAC-SHA-256 keyed with HKDF-SHA-256(IKM = the key's material, salt empty, info, L = 32):
     * the pseudonym and audit-chain MACs. The material and the derived key are wiped after use.
     */
    static javax.crypto.Mac hmacSha256(DataKey key, byte[] info) {
        byte[] material = key.material();
        byte[] derived = sha256(material, new byte[0], info, SUBKEY_LENGTH);
        java.util.Arrays.fill(material, (byte) 0);
        try {
            javax.crypto.Mac m = javax.crypto.Mac.getInstance("HmacSHA256");
            m.init(new javax.crypto.spec.SecretKeySpec(derived, "HmacSHA256"));
            return m;
        } catch (java.security.GeneralSecurityException e) {
            throw new CryptoException("HMAC-SHA-256 is not available: " + e.getMessage());
        } finally {
            java.util.Arrays.fill(derived, (byte) 0);
        }
    }

    /** macKey = HKDF-SHA-256(IKM=K, salt=empty, info="mongo-fle-proxy/v{1,2}/mac", L=32). */
    static byte[] macKey(byte[] key, int format) {
        return subkey(key, format == Envelope.FORMAT_V1 ? MAC_INFO_V1 : MAC_INFO_V2);
    }

    /** detKey = HKDF-SHA-256(IKM=K, salt=empty, info="mongo-fle-proxy/v{1,2}/det", L=32). */
    static byte[] detKey(byte[] key, int format) {
        return subkey(key, format == Envelope.FORMAT_V1 ? DET_INFO_V1 : DET_INFO_V2);
    }

    private static byte[] subkey(byte[] key, String info) {
        return sha256(key, new byte[0], info.getBytes(StandardCharsets.US_ASCII), SUBKEY_LENGTH);
    }
}
