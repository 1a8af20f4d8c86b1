package dev.fleproxy.wire;

import dev.fleproxy.testing.WireIO;
import io.netty.buffer.Unpooled;

/** Test helpers: messages as bytes and frames. */
final class Messages {
    private Messages() {
    }

    static byte[] bytes(WireMessage message, int requestId, int responseTo) {
        return WireIO.encode(message, requestId, responseTo);
    }

    static Frame frame(byte[] bytes) {
        return new Frame(Unpooled.wrappedBuffer(bytes));
    }
}
