package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.bson.BsonDocument;

/**
 * OP_QUERY (opcode 2004). Current drivers send it only for the first handshake (legacy hello:
 * {@code isMaster} on {@code admin.$cmd}); servers since 5.1 reject it for anything else.
 */
public record OpQuery(int flags, String fullCollectionName, int numberToSkip, int numberToReturn,
                      BsonDocument query, BsonDocument returnFieldsSelector) implements WireMessage {

    @Override
    public int opCode() {
        return OpCode.OP_QUERY;
    }

    /** True for a command sent the legacy way: a query on the {@code $cmd} pseudo-collection. */
    public boolean isCommand() {
        return fullCollectionName.endsWith(".$cmd");
    }

    public String database() {
        int dot = fullCollectionName.indexOf('.');
        return dot < 0 ? fullCollectionName : fullCollectionName.substring(0, dot);
    }

    /** The command document, unwrapped from the {@code $query} envelope some drivers use. */
    public BsonDocument command() {
        return query.containsKey("$query") && query.isDocument("$query") ? query.getDocument("$query") : query;
    }

    /** The same query with the command document replaced, keeping any {@code $query} wrapping. */
    public OpQuery withCommand(BsonDocument command) {
        BsonDocument q = query;
        if (query.containsKey("$query") && query.isDocument("$query")) {
            q = query.clone();
            q.put("$query", command);
        } else {
            q = command;
        }
        return new OpQuery(flags, fullCollectionName, numberToSkip, numberToReturn, q, returnFieldsSelector);
    }

    public static OpQuery parse(Frame frame) {
        WireReader r = WireReader.afterHeader(frame);
        int flags = r.int32("OP_QUERY flags");
        String name = r.cstring("OP_QUERY fullCollectionName");
        int skip = r.int32("OP_QUERY numberToSkip");
        int limit = r.int32("OP_QUERY numberToReturn");
        BsonDocument query = r.document("OP_QUERY query");
        BsonDocument selector = r.hasRemaining() ? r.document("OP_QUERY returnFieldsSelector") : null;
        if (r.hasRemaining()) {
            throw new WireProtocolException("OP_QUERY has " + r.remaining() + " trailing bytes");
        }
        return new OpQuery(flags, name, skip, limit, query, selector);
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo) {
        byte[] name = fullCollectionName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer q = BsonBytes.encode(query);
        ByteBuffer sel = returnFieldsSelector == null ? null : BsonBytes.encode(returnFieldsSelector);
        int size = MsgHeader.SIZE + 4 + name.length + 1 + 8 + q.remaining() + (sel == null ? 0 : sel.remaining());
        ByteBuf out = alloc.buffer(size);
        new MsgHeader(size, requestId, responseTo, OpCode.OP_QUERY).writeTo(out);
        out.writeIntLE(flags).writeBytes(name).writeByte(0).writeIntLE(numberToSkip).writeIntLE(numberToReturn);
        BsonBytes.write(out, q);
        if (sel != null) {
            BsonBytes.write(out, sel);
        }
        return out;
    }
}
