package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;

/** Test helpers: messages as bytes and frames. */
final class Messages {
    private Messages() {
    }

    static byte[] bytes(WireMessage message, int requestId, int responseTo) {
        ByteBuf buf = message.encode(UnpooledByteBufAllocator.DEFAULT, requestId, responseTo);
        try {
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    static Frame frame(byte[] bytes) {
        return new Frame(Unpooled.wrappedBuffer(bytes));
    }
}
