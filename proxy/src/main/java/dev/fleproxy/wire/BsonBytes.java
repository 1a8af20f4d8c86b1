package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;

/** Writes BSON documents into wire buffers without re-encoding those still in raw form. */
public final class BsonBytes {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private BsonBytes() {
    }

    /** The encoded bytes of a document; a {@link RawBsonDocument} is returned as it is. */
    public static ByteBuffer encode(BsonDocument doc) {
        if (doc instanceof RawBsonDocument raw) {
            return raw.getByteBuffer().asNIO();
        }
        BsonOutput out = new BsonOutput();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            CODEC.encode(writer, doc, EncoderContext.builder().build());
        }
        return ByteBuffer.wrap(out.getInternalBuffer(), 0, out.getPosition());
    }

    public static RawBsonDocument toRaw(BsonDocument doc) {
        if (doc instanceof RawBsonDocument raw) {
            return raw;
        }
        ByteBuffer bytes = encode(doc);
        return new RawBsonDocument(bytes.array(), 0, bytes.remaining());
    }

    static void write(ByteBuf out, BsonDocument doc) {
        out.writeBytes(encode(doc));
    }

    static void write(ByteBuf out, ByteBuffer encoded) {
        out.writeBytes(encoded.duplicate());
    }
}
