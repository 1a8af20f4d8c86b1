package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;

/**
 * OP_MSG (opcode 2013): flagBits, exactly one kind-0 section (the command or reply body), any
 * number of kind-1 document sequences, and an optional CRC-32C trailer.
 */
public record OpMsg(int flagBits, BsonDocument body, List<DocumentSequence> sequences) implements WireMessage {
    public static final int CHECKSUM_PRESENT = 1;
    public static final int MORE_TO_COME = 1 << 1;
    public static final int EXHAUST_ALLOWED = 1 << 16;

    public OpMsg {
        sequences = List.copyOf(sequences);
    }

    public OpMsg(int flagBits, BsonDocument body) {
        this(flagBits, body, List.of());
    }

    @Override
    public int opCode() {
        return OpCode.OP_MSG;
    }

    public boolean has(int flag) {
        return (flagBits & flag) != 0;
    }

    public OpMsg withBody(BsonDocument newBody) {
        return new OpMsg(flagBits, newBody, sequences);
    }

    public static boolean isMoreToCome(Frame frame) {
        return frame.opCode() == OpCode.OP_MSG
                && (frame.content().getIntLE(frame.content().readerIndex() + MsgHeader.SIZE) & MORE_TO_COME) != 0;
    }

    /** Parses and validates a whole OP_MSG frame, checksum included (see {@link OpMsgView}). */
    public static OpMsg parse(Frame frame) {
        return OpMsgView.of(frame).toOpMsg();
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo) {
        ByteBuffer bodyBytes = BsonBytes.encode(body);
        List<byte[]> ids = new ArrayList<>(sequences.size());
        List<List<ByteBuffer>> docs = new ArrayList<>(sequences.size());
        long size = MsgHeader.SIZE + 4L + 1 + bodyBytes.remaining();
        for (DocumentSequence seq : sequences) {
            byte[] id = seq.identifier().getBytes(StandardCharsets.UTF_8);
            List<ByteBuffer> encoded = new ArrayList<>(seq.documents().size());
            long seqSize = 4L + id.length + 1;
            for (BsonDocument d : seq.documents()) {
                ByteBuffer b = BsonBytes.encode(d);
                encoded.add(b);
                seqSize += b.remaining();
            }
            ids.add(id);
            docs.add(encoded);
            size += 1 + seqSize;
        }
        boolean checksum = has(CHECKSUM_PRESENT);
        if (checksum) {
            size += 4;
        }
        if (size > Integer.MAX_VALUE) {
            throw new WireProtocolException("encoded OP_MSG would be " + size + " bytes");
        }
        ByteBuf out = MessagePieces.forMessage(alloc, (int) size);
        int start = out.writerIndex();
        new MsgHeader((int) size, requestId, responseTo, OpCode.OP_MSG).writeTo(out);
        out.writeIntLE(flagBits);
        out.writeByte(0);
        BsonBytes.write(out, bodyBytes);
        for (int i = 0; i < ids.size(); i++) {
            out.writeByte(1);
            int sizeAt = out.writerIndex();
            out.writeIntLE(0);
            out.writeBytes(ids.get(i)).writeByte(0);
            for (ByteBuffer b : docs.get(i)) {
                BsonBytes.write(out, b);
            }
            out.setIntLE(sizeAt, out.writerIndex() - sizeAt);
        }
        if (checksum) {
            out.writeIntLE(OpMsgView.crc32c(out, start, out.writerIndex() - start));
        }
        return out;
    }
}
