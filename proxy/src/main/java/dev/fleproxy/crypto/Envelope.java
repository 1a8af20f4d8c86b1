package dev.fleproxy.crypto;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The ciphertext formats (docs/envelope-format.md, normative): a format byte (0x81 = v1, 0x82 =
 * v2), the suite byte (0x40 = deterministic), the key's UUID in RFC 4122 byte order, the original
 * BSON type byte, then nonce ‖ ciphertext ‖ tag. v1 authenticates the 19-byte header only; v2
 * authenticates the header ‖ a context naming the namespace and the policy field the value was
 * written for, so it opens only there. Writers write v2; readers accept both.
 */
public final class Envelope {
    public static final int FORMAT_V1 = 0x81;
    public static final int FORMAT_V2 = 0x82;
    public static final int HEADER_LENGTH = 19;

    private Envelope() {
    }

    /** What the header says, once it has been checked to be an envelope of a known suite. */
    public record Header(int format, CipherSuite suite, boolean deterministic, UUID keyId, byte bsonType) {
    }

    /** True if the bytes start like one of our envelopes (anything else is not ours to decrypt). */
    public static boolean isEnvelope(byte[] bytes) {
        return Envelopes.isEnvelope(bytes, 0, bytes.length);
    }

    /** Reads and checks the header; anything short, unknown or inconsistent fails as decryption. */
    public static Header parse(byte[] envelope) {
        if (!isEnvelope(envelope)) {
            throw new DecryptionFailedException();
        }
        int suiteByte = envelope[1] & 0xff;
        CipherSuite suite = CipherSuite.byId(suiteByte);
        if (suite == null || (suiteByte & 0x80) != 0
                || envelope.length < HEADER_LENGTH + suite.sealedLength(0)) {
            throw new DecryptionFailedException();
        }
        ByteBuffer b = ByteBuffer.wrap(envelope, 2, 16);
        UUID keyId = new UUID(b.getLong(), b.getLong());
        return new Header(envelope[0] & 0xff, suite, (suiteByte & CipherSuite.DETERMINISTIC_FLAG) != 0, keyId,
                envelope[18]);
    }

    /**
     * The v2 context C = UTF-8(namespace) ‖ 0x00 ‖ UTF-8(field path) ‖ 0x00, where the field path
     * is the policy's dotted path (under {@code fields: "*"}, the top-level field name). Neither
     * part may contain 0x00, so C names one place only.
     */
    public static byte[] context(String namespace, String fieldPath) {
        byte[] ns = namespace.getBytes(StandardCharsets.UTF_8);
        byte[] path = fieldPath.getBytes(StandardCharsets.UTF_8);
        byte[] c = new byte[ns.length + path.length + 2];
        System.arraycopy(ns, 0, c, 0, ns.length);
        System.arraycopy(path, 0, c, ns.length + 1, path.length);
        if (indexOfZero(ns) >= 0 || indexOfZero(path) >= 0) {
            throw new IllegalArgumentException("a namespace or field path cannot contain a NUL byte");
        }
        return c;
    }

    private static int indexOfZero(byte[] b) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    static void writeHeader(byte[] out, int format, CipherSuite suite, boolean deterministic, UUID keyId,
                            byte bsonType) {
        out[0] = (byte) format;
        out[1] = (byte) (suite.id() | (deterministic ? CipherSuite.DETERMINISTIC_FLAG : 0));
        long msb = keyId.getMostSignificantBits();
        long lsb = keyId.getLeastSignificantBits();
        for (int i = 0; i < 8; i++) {
            out[2 + i] = (byte) (msb >>> (56 - 8 * i));
            out[10 + i] = (byte) (lsb >>> (56 - 8 * i));
        }
        out[18] = bsonType;
    }
}
