package dev.fleproxy.rewrite.bson;

import dev.fleproxy.wire.BsonOutput;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.EncoderContext;

/**
 * A BSON value as the ciphertext format encrypts it: its type byte and its value bytes exactly as
 * they follow the element name in a document (a string is int32 length + UTF-8 + NUL, an int32
 * four little-endian bytes, a document or array its whole BSON document). Every BSON type
 * round-trips.
 */
public record BsonValueBytes(byte type, byte[] bytes) {
    private static final BsonValueCodec CODEC = new BsonValueCodec();
    /** Name of the single element of the wrapper document: "v" and its NUL. */
    private static final int NAME_LENGTH = 2;

    public static BsonValueBytes of(BsonValue value) {
        if (value.getBsonType() == BsonType.STRING) {
            return ofString(value.asString().getValue());
        }
        BsonOutput out = new BsonOutput(64);
        try (BsonBinaryWriter w = new BsonBinaryWriter(out)) {
            w.writeStartDocument();
            w.writeName("v");
            CODEC.encode(w, value, EncoderContext.builder().build());
            w.writeEndDocument();
        }
        byte[] doc = out.getInternalBuffer();
        int docLen = out.getPosition();
        int valueStart = 4 + 1 + NAME_LENGTH;
        byte[] bytes = new byte[docLen - valueStart - 1];
        System.arraycopy(doc, valueStart, bytes, 0, bytes.length);
        return new BsonValueBytes(doc[4], bytes);
    }

    /** Strings are most of what is encrypted: their bytes directly, without a writer. */
    private static BsonValueBytes ofString(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        byte[] bytes = new byte[4 + utf8.length + 1];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(utf8.length + 1).put(utf8);
        return new BsonValueBytes((byte) BsonType.STRING.getValue(), bytes);
    }

    /** The value back; bytes that do not form a value of the type are a BSON exception. */
    public BsonValue toBsonValue() {
        if (type == BsonType.STRING.getValue()) {
            if (bytes.length < 5 || bytes[bytes.length - 1] != 0
                    || ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt() != bytes.length - 4) {
                throw new org.bson.BSONException("a string's length does not match its bytes");
            }
            return new BsonString(new String(bytes, 4, bytes.length - 5, StandardCharsets.UTF_8));
        }
        BsonType.findByValue(type & 0xff); // throws for an unknown type byte
        int len = 4 + 1 + NAME_LENGTH + bytes.length + 1;
        ByteBuffer doc = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        doc.putInt(len).put(type).put((byte) 'v').put((byte) 0).put(bytes).put((byte) 0);
        BsonDocument parsed = new RawBsonDocument(doc.array());
        return parsed.get("v");
    }
}
