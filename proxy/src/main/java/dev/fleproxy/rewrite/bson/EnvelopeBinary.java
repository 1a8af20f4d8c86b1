package dev.fleproxy.rewrite.bson;

import dev.fleproxy.crypto.Envelopes;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonValue;

/**
 * Envelopes as stored: BSON Binary, subtype 6 ("encrypted value") by default, 0 for backends that
 * cannot store 6 (the embedded mongo-java-server). Readers accept both; the format byte, not the
 * subtype, says that a binary value is one of ours.
 */
public final class EnvelopeBinary {
    public static final byte ENCRYPTED = BsonBinarySubType.ENCRYPTED.getValue();
    public static final byte GENERIC = BsonBinarySubType.BINARY.getValue();

    private EnvelopeBinary() {
    }

    public static BsonBinary wrap(byte[] envelope, byte subtype) {
        if (subtype != ENCRYPTED && subtype != GENERIC) {
            throw new IllegalArgumentException("envelopes are stored as binary subtype 6 or 0, not " + subtype);
        }
        return new BsonBinary(subtype, envelope);
    }

    /** The envelope inside a stored value, or null if the value is not one of ours. */
    public static byte[] unwrap(BsonValue value) {
        if (value == null || !value.isBinary()) {
            return null;
        }
        BsonBinary b = value.asBinary();
        return holdsEnvelope(b.getType(), b.getData(), 0, b.getData().length) ? b.getData() : null;
    }

    /** True if a binary value of this subtype and data buf[off, off+len) is one of our envelopes. */
    public static boolean holdsEnvelope(byte subtype, byte[] buf, int off, int len) {
        return (subtype == ENCRYPTED || subtype == GENERIC) && Envelopes.isEnvelope(buf, off, len);
    }
}
