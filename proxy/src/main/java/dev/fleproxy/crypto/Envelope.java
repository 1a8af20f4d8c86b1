package dev.fleproxy.crypto;

import java.nio.ByteBuffer;
import java.util.UUID;

/**
 * The ciphertext format v1 (DESIGN.md §3, normative): format byte 0x81, suite byte (0x40 =
 * deterministic), the key's UUID in RFC 4122 byte order, the original BSON type byte, then
 * nonce ‖ ciphertext ‖ tag. The first 19 bytes are the associated data.
 */
public final class Envelope {
    public static final int FORMAT_V1 = 0x81;
    public static final int HEADER_LENGTH = 19;

    private Envelope() {
    }

    /** What the header says, once it has been checked to be a v1 envelope of a known suite. */
    public record Header(CipherSuite suite, boolean deterministic, UUID keyId, byte bsonType) {
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
        return new Header(suite, (suiteByte & CipherSuite.DETERMINISTIC_FLAG) != 0, keyId, envelope[18]);
    }

    static void writeHeader(byte[] out, CipherSuite suite, boolean deterministic, UUID keyId, byte bsonType) {
        out[0] = (byte) FORMAT_V1;
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
