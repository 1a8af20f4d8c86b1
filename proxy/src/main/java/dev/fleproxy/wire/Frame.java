package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * One whole wire message exactly as it arrived (header included). Forwarding a frame nobody
 * rewrote sends these very bytes, so unknown opcodes and untouched commands pass byte for byte.
 */
public final class Frame extends DefaultByteBufHolder {
    // the header, read once: every filter asks for it, and content() checks the buffer each call
    private final int length;
    private final int requestId;
    private final int responseTo;
    private final int opCode;

    public Frame(ByteBuf wholeMessage) {
        super(wholeMessage);
        int at = wholeMessage.readerIndex();
        this.length = wholeMessage.getIntLE(at);
        this.requestId = wholeMessage.getIntLE(at + 4);
        this.responseTo = wholeMessage.getIntLE(at + 8);
        this.opCode = wholeMessage.getIntLE(at + 12);
    }

    public int length() {
        return length;
    }

    public int requestId() {
        return requestId;
    }

    public int responseTo() {
        return responseTo;
    }

    public int opCode() {
        return opCode;
    }

    @Override
    public String toString() {
        return OpCode.name(opCode()) + "(requestId=" + requestId() + ", responseTo=" + responseTo()
                + ", " + length() + " bytes)";
    }
}
