package dev.fleproxy.crypto;

import java.security.DrbgParameters;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import javax.crypto.Mac;

/**
 * Where nonces/IVs come from. Random: a SecureRandom (NIST DRBG, one per thread, so threads do
 * not contend on one lock). Deterministic: the first n bytes of HMAC-SHA-256(detKey, AAD ‖
 * plaintext), so equal values under one key and field type encrypt equally (DESIGN.md §3).
 */
interface NonceSource {

    void nonce(byte[] aad, int aadOff, int aadLen, byte[] pt, int ptOff, int ptLen, byte[] out, int outOff, int n);

    NonceSource RANDOM = new NonceSource() {
        private final ThreadLocal<SecureRandom> randoms = ThreadLocal.withInitial(NonceSource::newDrbg);
        private final ThreadLocal<byte[]> scratch = ThreadLocal.withInitial(() -> new byte[16]);

        @Override
        public void nonce(byte[] aad, int aadOff, int aadLen, byte[] pt, int ptOff, int ptLen,
                          byte[] out, int outOff, int n) {
            byte[] buf = scratch.get();
            randoms.get().nextBytes(buf);
            System.arraycopy(buf, 0, out, outOff, n);
        }
    };

    static NonceSource deterministic(byte[] detKey) {
        HmacSha256 hmac = new HmacSha256(detKey);
        ThreadLocal<byte[]> scratch = ThreadLocal.withInitial(() -> new byte[HmacSha256.LENGTH]);
        return (aad, aadOff, aadLen, pt, ptOff, ptLen, out, outOff, n) -> {
            Mac mac = hmac.mac();
            mac.update(aad, aadOff, aadLen);
            mac.update(pt, ptOff, ptLen);
            byte[] digest = scratch.get();
            HmacSha256.finish(mac, digest, 0);
            System.arraycopy(digest, 0, out, outOff, n);
        };
    }

    private static SecureRandom newDrbg() {
        try {
            return SecureRandom.getInstance("DRBG",
                    DrbgParameters.instantiation(256, DrbgParameters.Capability.RESEED_ONLY, null));
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }
}
