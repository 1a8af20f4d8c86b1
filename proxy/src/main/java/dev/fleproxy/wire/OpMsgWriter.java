package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Writes a rewritten OP_MSG straight into one outgoing buffer, section by section, for the
 * rewriters that stream documents instead of building them: header and flags first, lengths
 * filled in as sections end, the checksum (when the original had one) at the end. The result
 * carries the ids of the message it replaces.
 */
public final class OpMsgWriter {
    private final ByteBuf out;
    private final int start;
    private final int flags;

    private OpMsgWriter(ByteBuf out, int flags) {
        this.out = out;
        this.start = out.writerIndex();
        this.flags = flags;
    }

    /** Starts the replacement of {@code original}: same ids and flags; room for about sizeHint bytes. */
    public static OpMsgWriter replacing(OpMsgView original, ByteBufAllocator alloc, int sizeHint) {
        ByteBuf out = MessagePieces.forMessage(alloc, Math.max(64, sizeHint));
        OpMsgWriter w = new OpMsgWriter(out, original.flagBits());
        Frame f = original.frame();
        new MsgHeader(0, f.requestId(), f.responseTo(), OpCode.OP_MSG).writeTo(out);
        out.writeIntLE(original.flagBits());
        return w;
    }

    public ByteBuf out() {
        return out;
    }

    /** The body (kind-0 section) follows: write its document next. */
    public void body() {
        out.writeByte(0);
    }

    /** A document sequence follows; write its documents, then {@link #endSequence} with the returned mark. */
    public int beginSequence(String identifier) {
        out.writeByte(1);
        int at = out.writerIndex();
        out.writeIntLE(0);
        out.writeBytes(identifier.getBytes(StandardCharsets.UTF_8)).writeByte(0);
        return at;
    }

    public void endSequence(int mark) {
        out.setIntLE(mark, out.writerIndex() - mark);
    }

    /** Ends the message: its length, and a fresh checksum if the original carried one. */
    public Frame finish() {
        if ((flags & OpMsg.CHECKSUM_PRESENT) != 0) {
            out.writeIntLE(0); // counted in the length the checksum covers
            out.setIntLE(start, out.writerIndex() - start);
            int crc = OpMsgView.crc32c(out, start, out.writerIndex() - start - 4);
            out.setIntLE(out.writerIndex() - 4, crc);
        } else {
            out.setIntLE(start, out.writerIndex() - start);
        }
        return new Frame(out);
    }

    /** Gives up: the buffer is released. */
    public void abandon() {
        out.release();
    }

    // ---- documents, element by element ------------------------------------------------------

    /** Starts a document; returns the mark {@link #endDocument} needs. */
    public static int beginDocument(ByteBuf out) {
        int at = out.writerIndex();
        out.writeIntLE(0);
        return at;
    }

    public static void endDocument(ByteBuf out, int mark) {
        out.writeByte(0);
        out.setIntLE(mark, out.writerIndex() - mark);
    }

    /** An element's type and name (taken from the cursor's current element); its value follows. */
    public static void elementHeader(ByteBuf out, byte type, BsonCursor c) {
        out.writeByte(type);
        out.writeBytes(c.buffer(), c.nameStart, c.nameEnd - c.nameStart + 1);
    }

    /** The cursor's current element, as it is. */
    public static void copyElement(ByteBuf out, BsonCursor c) {
        out.writeBytes(c.buffer(), c.elementStart, c.valueEnd - c.elementStart);
    }

    /** A binary element named like the cursor's current element. */
    public static void binaryElement(ByteBuf out, BsonCursor c, byte subtype, byte[] data) {
        elementHeader(out, BsonCursor.BINARY, c);
        out.writeIntLE(data.length);
        out.writeByte(subtype);
        out.writeBytes(data);
    }
}
