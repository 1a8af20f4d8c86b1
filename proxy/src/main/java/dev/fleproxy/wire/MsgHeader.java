package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;

/**
 * The 16-byte header every wire message starts with: int32 messageLength (counts itself),
 * requestID, responseTo, opCode, all little-endian.
 */
public record MsgHeader(int messageLength, int requestId, int responseTo, int opCode) {
    public static final int SIZE = 16;
    /** The largest message a server accepts (hello's maxMessageSizeBytes default). */
    public static final int MAX_MESSAGE_SIZE = 48_000_000;

    /** Reads the header at the reader index without moving it. */
    public static MsgHeader peek(ByteBuf buf) {
        int i = buf.readerIndex();
        return new MsgHeader(buf.getIntLE(i), buf.getIntLE(i + 4), buf.getIntLE(i + 8), buf.getIntLE(i + 12));
    }

    public void writeTo(ByteBuf out) {
        out.writeIntLE(messageLength).writeIntLE(requestId).writeIntLE(responseTo).writeIntLE(opCode);
    }

    /** Checks a declared message length before any of its body has been read. */
    public static void checkLength(int declared) {
        checkLength(declared, MAX_MESSAGE_SIZE);
    }

    /** The same check against a lower maximum (a peer the proxy will read one small message from). */
    public static void checkLength(int declared, int max) {
        if (declared < SIZE) {
            throw new WireProtocolException("declared message length " + declared
                    + " is smaller than the 16-byte header");
        }
        if (declared > max) {
            throw new WireProtocolException("declared message length " + declared
                    + " exceeds the maximum of " + max + " bytes");
        }
    }
}
