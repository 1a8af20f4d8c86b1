package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Buffers for the messages the proxy writes. Up to {@link #REUSED} bytes, one buffer from the
 * allocator. Past that, a composite of {@link #PIECE}-byte pieces: the allocator keeps only so
 * much memory in large chunks, and maps fresh memory for the rest, which the kernel then faults
 * in page by page. Measured here, allocating and releasing 57 MB at a time 20 times: one buffer,
 * or pieces of 2 to 8 MiB, 14,000 page faults a time; pieces of 1 MiB, 400–800; of 512 KiB, 8. A
 * 38 MB insert through the AES-GCM proxy cost 2.2× the CPU per KB of a 1 MB one (issue 30).
 */
public final class OutgoingBuffers {
    static final int REUSED = 1 << 20;
    static final int PIECE = 512 << 10;

    private OutgoingBuffers() {
    }

    /** A buffer with room for {@code size} bytes, empty; it grows past that as any buffer does. */
    public static ByteBuf forMessage(ByteBufAllocator alloc, int size) {
        if (size <= REUSED) {
            return alloc.buffer(size);
        }
        CompositeByteBuf pieces = alloc.compositeBuffer(Integer.MAX_VALUE);
        try {
            for (int left = size; left > 0; left -= PIECE) {
                int n = Math.min(PIECE, left);
                pieces.addComponent(true, alloc.buffer(n, n).writerIndex(n)); // its room, counted in
            }
        } catch (Throwable t) {
            pieces.release();
            throw t;
        }
        return pieces.setIndex(0, 0); // the room, empty
    }
}
