package dev.fleproxy.crypto;

import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** One HMAC-SHA-256 key, with an initialised JCE Mac per thread (SHA-256 is intrinsified). */
final class HmacSha256 {
    static final int LENGTH = 32;
    private final ThreadLocal<Mac> macs;

    HmacSha256(byte[] key) {
        SecretKeySpec spec = new SecretKeySpec(key, "HmacSHA256");
        macs = ThreadLocal.withInitial(() -> {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(spec);
                return mac;
            } catch (GeneralSecurityException e) {
                throw new CryptoException("HmacSHA256 is not available: " + e.getMessage(), e);
            }
        });
    }

    /** A Mac ready for update()s; doFinal() leaves it ready for the next message. */
    Mac mac() {
        return macs.get();
    }

    static void finish(Mac mac, byte[] out, int outOff) {
        try {
            mac.doFinal(out, outOff);
        } catch (javax.crypto.ShortBufferException e) {
            throw new IllegalStateException(e);
        }
    }
}
