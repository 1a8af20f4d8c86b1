package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import javax.crypto.Mac;

/**
 * The MAC of the audit trail's chain (docs/access.md, "The audit trail"): HMAC-SHA-256 under
 * HKDF-SHA-256(IKM = the audit key from the KMS, salt empty, info "mongo-fle-proxy/audit/v1",
 * L = 32), over the previous line's MAC (32 zero bytes before the first line) and the line's own
 * bytes. One instance per thread.
 */
public final class ChainMac {
    public static final int LENGTH = 32;
    private static final byte[] INFO = "mongo-fle-proxy/audit/v1".getBytes(StandardCharsets.US_ASCII);

    private final Mac mac;

    private ChainMac(Mac mac) {
        this.mac = mac;
    }

    public static ChainMac of(DataKey auditKey) {
        return new ChainMac(Hkdf.hmacSha256(auditKey, INFO));
    }

    /** The MAC of a line that follows a line whose MAC was {@code previous}. */
    public byte[] next(byte[] previous, byte[] line) {
        mac.update(previous);
        return mac.doFinal(line);
    }

    /** As {@link #next(byte[], byte[])}, for the first {@code length} bytes of {@code line}, into {@code mac}. */
    public void next(byte[] previous, byte[] line, int length, byte[] mac) {
        this.mac.update(previous);
        this.mac.update(line, 0, length);
        try {
            this.mac.doFinal(mac, 0);
        } catch (javax.crypto.ShortBufferException e) {
            throw new IllegalArgumentException("a chain MAC needs " + LENGTH + " bytes", e);
        }
    }

    /** Compared in constant time. */
    public static boolean same(byte[] a, byte[] b) {
        return MessageDigest.isEqual(a, b);
    }
}
