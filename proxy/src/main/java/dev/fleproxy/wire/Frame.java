package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * One whole wire message exactly as it arrived (header included). Forwarding a frame nobody
 * rewrote sends these very bytes, so unknown opcodes and untouched commands pass byte for byte.
 */
public final class Frame extends DefaultByteBufHolder {

    public Frame(ByteBuf wholeMessage) {
        super(wholeMessage);
    }

    public int length() {
        return content().getIntLE(content().readerIndex());
    }

    public int requestId() {
        return content().getIntLE(content().readerIndex() + 4);
    }

    public int responseTo() {
        return content().getIntLE(content().readerIndex() + 8);
    }

    public int opCode() {
        return content().getIntLE(content().readerIndex() + 12);
    }

    @Override
    public String toString() {
        return OpCode.name(opCode()) + "(requestId=" + requestId() + ", responseTo=" + responseTo()
                + ", " + length() + " bytes)";
    }
}
