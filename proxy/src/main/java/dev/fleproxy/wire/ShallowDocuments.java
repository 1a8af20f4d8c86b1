package dev.fleproxy.wire;

import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonArray;
import org.bson.RawBsonDocument;

/**
 * A command's top level as a map, its sub-documents and arrays left as raw views over the same
 * bytes: looking a field up is a map lookup, and only what a rewriter opens gets decoded (a find
 * by _id opens its filter and nothing else). Callers refuse documents that name a field twice
 * before they examine them ({@link BsonCursor#nameProblem}).
 */
public final class ShallowDocuments {
    private ShallowDocuments() {
    }

    /** The document at buf[off, its end): scalars decoded, documents and arrays as raw views. */
    public static BsonDocument of(byte[] buf, int off, int limit) {
        BsonCursor c = new BsonCursor(buf, off, limit);
        BsonDocument out = new BsonDocument();
        RawBsonDocument whole = null;
        while (c.next()) {
            String name = c.name();
            BsonValue v = switch (c.type) {
                case BsonCursor.DOCUMENT -> new RawBsonDocument(buf, c.valueStart, c.valueEnd - c.valueStart);
                case BsonCursor.ARRAY -> new RawBsonArray(buf, c.valueStart, c.valueEnd - c.valueStart);
                case BsonCursor.STRING -> new BsonString(c.stringValue());
                case BsonCursor.INT32 -> new BsonInt32(BsonCursor.int32(buf, c.valueStart));
                case 0x12 -> new BsonInt64(BsonCursor.int64(buf, c.valueStart));
                case BsonCursor.DOUBLE -> new BsonDouble(Double.longBitsToDouble(BsonCursor.int64(buf, c.valueStart)));
                case 0x08 -> BsonBoolean.valueOf(buf[c.valueStart] != 0);
                case 0x0A -> BsonNull.VALUE;
                default -> null;
            };
            if (v == null) { // the other types, rare in commands: as the driver decodes them
                if (whole == null) {
                    whole = new RawBsonDocument(buf, off, BsonCursor.int32(buf, off));
                }
                v = whole.get(name);
            }
            out.append(name, v);
        }
        return out;
    }
}
