package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** A message of an opcode the proxy does not interpret: its body is kept as bytes. */
public record OpaqueMessage(int opCode, byte[] body) implements WireMessage {

    public static OpaqueMessage parse(Frame frame) {
        ByteBuf buf = frame.content();
        byte[] body = new byte[frame.length() - MsgHeader.SIZE];
        buf.getBytes(buf.readerIndex() + MsgHeader.SIZE, body);
        return new OpaqueMessage(frame.opCode(), body);
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo) {
        int size = MsgHeader.SIZE + body.length;
        ByteBuf out = alloc.buffer(size);
        new MsgHeader(size, requestId, responseTo, opCode).writeTo(out);
        return out.writeBytes(body);
    }
}
