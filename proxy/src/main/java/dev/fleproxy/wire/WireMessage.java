package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** A parsed wire message that can be written back out, e.g. after a rewrite. */
public interface WireMessage {
    int opCode();

    /** Encodes the whole message, header included, with the given ids. */
    ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo);
}
