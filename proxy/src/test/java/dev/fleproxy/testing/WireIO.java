package dev.fleproxy.testing;

import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Whole wire messages over blocking streams, for tests that play one end of a connection. */
public final class WireIO {
    private WireIO() {
    }

    /** Reads one message, header included. */
    public static byte[] readMessage(DataInputStream in) throws IOException {
        byte[] lengthBytes = new byte[4];
        in.readFully(lengthBytes);
        int length = ByteBuffer.wrap(lengthBytes).order(ByteOrder.LITTLE_ENDIAN).getInt();
        byte[] whole = new byte[length];
        System.arraycopy(lengthBytes, 0, whole, 0, 4);
        in.readFully(whole, 4, length - 4);
        return whole;
    }

    public static byte[] encode(WireMessage message, int requestId, int responseTo) {
        ByteBuf buf = message.encode(UnpooledByteBufAllocator.DEFAULT, requestId, responseTo);
        try {
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return bytes;
        } finally {
            buf.release();
        }
    }
}
