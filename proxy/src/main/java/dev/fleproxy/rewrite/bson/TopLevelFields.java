package dev.fleproxy.rewrite.bson;

import dev.fleproxy.wire.BsonCursor;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * A document decoded only as far as some of its top-level fields: the others are skipped in place
 * (names compared as bytes), not decoded. A query the proxy evaluates reads its filter's and
 * sort's fields of every candidate, and the whole of only those it answers with (10,000
 * candidates of 4.4 KB decoded whole are 44 MB of garbage per query, for the one field the
 * filter reads). What is decoded is a copy: nothing refers to the bytes afterwards.
 */
public final class TopLevelFields {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private final String[] names;
    private final byte[][] bytes;

    public TopLevelFields(Set<String> names) {
        this.names = names.toArray(new String[0]);
        this.bytes = new byte[this.names.length][];
        for (int i = 0; i < this.names.length; i++) {
            bytes[i] = this.names[i].getBytes(StandardCharsets.UTF_8);
        }
    }

    /**
     * The fields of the well-formed document at buf[off, off + len) named here, in the document's
     * order (a field given twice: its last value, as the driver's decoder keeps it).
     */
    public BsonDocument decode(byte[] buf, int off, int len) {
        BsonDocument out = new BsonDocument();
        BsonCursor c = new BsonCursor(buf, off, off + len);
        while (c.next()) {
            for (int i = 0; i < bytes.length; i++) {
                if (c.nameIs(bytes[i])) {
                    out.put(names[i], value(buf, c));
                    break;
                }
            }
        }
        return out;
    }

    /** The current element's value: the common scalars read in place, anything else by the driver's decoder. */
    private static BsonValue value(byte[] buf, BsonCursor c) {
        return switch (c.type) {
            case BsonCursor.INT32 -> new BsonInt32(BsonCursor.int32(buf, c.valueStart));
            case 0x12 -> new BsonInt64(BsonCursor.int64(buf, c.valueStart));
            case BsonCursor.DOUBLE -> new BsonDouble(Double.longBitsToDouble(BsonCursor.int64(buf, c.valueStart)));
            case 0x08 -> BsonBoolean.valueOf(buf[c.valueStart] != 0);
            case BsonCursor.NULL -> BsonNull.VALUE;
            default -> {
                // the element alone as a document of its own, decoded whole: a copy, exactly as the driver reads it
                int element = c.valueEnd - c.elementStart;
                byte[] doc = new byte[element + 5];
                doc[0] = (byte) doc.length;
                doc[1] = (byte) (doc.length >>> 8);
                doc[2] = (byte) (doc.length >>> 16);
                doc[3] = (byte) (doc.length >>> 24);
                System.arraycopy(buf, c.elementStart, doc, 4, element);
                BsonDocument one = new RawBsonDocument(doc).decode(CODEC);
                yield one.values().iterator().next();
            }
        };
    }
}
