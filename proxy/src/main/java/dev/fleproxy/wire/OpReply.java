package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;

/** OP_REPLY (opcode 1): the server's answer to an OP_QUERY, here the legacy handshake's. */
public record OpReply(int responseFlags, long cursorId, int startingFrom, List<BsonDocument> documents)
        implements WireMessage {

    public OpReply {
        documents = List.copyOf(documents);
    }

    @Override
    public int opCode() {
        return OpCode.OP_REPLY;
    }

    public OpReply withDocuments(List<BsonDocument> newDocuments) {
        return new OpReply(responseFlags, cursorId, startingFrom, newDocuments);
    }

    /** Reads the fields in the order the legacy wire protocol lays them out (the same shape as {@link OpQuery#parse}). */
    public static OpReply parse(Frame frame) {
        WireReader r = WireReader.afterHeader(frame);
        int flags = r.int32("OP_REPLY responseFlags");
        long cursorId = r.int64("OP_REPLY cursorID");
        int startingFrom = r.int32("OP_REPLY startingFrom");
        int numberReturned = r.int32("OP_REPLY numberReturned");
        if (numberReturned < 0) {
            throw new WireProtocolException("OP_REPLY numberReturned is negative");
        }
        List<BsonDocument> docs = new ArrayList<>();
        for (int i = 0; i < numberReturned; i++) {
            docs.add(r.document("OP_REPLY document " + i));
        }
        if (r.hasRemaining()) {
            throw new WireProtocolException("OP_REPLY has " + r.remaining() + " bytes beyond its "
                    + numberReturned + " documents");
        }
        return new OpReply(flags, cursorId, startingFrom, docs);
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo) {
        List<ByteBuffer> encoded = new ArrayList<>(documents.size());
        int size = MsgHeader.SIZE + 20;
        for (BsonDocument d : documents) {
            ByteBuffer b = BsonBytes.encode(d);
            encoded.add(b);
            size += b.remaining();
        }
        ByteBuf out = alloc.buffer(size);
        new MsgHeader(size, requestId, responseTo, OpCode.OP_REPLY).writeTo(out);
        out.writeIntLE(responseFlags).writeLongLE(cursorId).writeIntLE(startingFrom).writeIntLE(documents.size());
        for (ByteBuffer b : encoded) {
            BsonBytes.write(out, b);
        }
        return out;
    }
}
