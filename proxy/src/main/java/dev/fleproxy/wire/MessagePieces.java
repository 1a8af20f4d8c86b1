package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The memory of large messages (issue 30): a message over {@link #WHOLE_UP_TO} bytes, read or
 * written, is held in {@link #SIZE}-byte pieces (a composite buffer) cut from slabs of
 * {@link #PIECES_PER_SLAB} pieces kept here.
 *
 * <p>Why pieces: one buffer per message needs fresh memory of the message's size past what
 * Netty's allocator keeps, which the kernel then faults in page by page (18,000 page faults for a
 * 38 MB message; 5× the proxy CPU per KB of a 1 MB one). Why slabs of their own, not the
 * allocator's chunks or one malloc per piece: the allocator keeps its chunks (it frees idle ones
 * only as it allocates more), and the C library keeps freed blocks of a few hundred KB in its
 * heaps; either way, after ten peers had held 400 MB of partial messages and left, the process
 * stayed 350–450 MB larger. A slab is just over 32 MiB, which the C library always maps on its
 * own and unmaps when freed. A slab whose pieces are all free is freed at once past
 * {@link #SPARE_SLABS} such slabs, and all of them once no piece was taken for
 * {@link #IDLE_SECONDS} seconds.
 */
public final class MessagePieces {
    static final int WHOLE_UP_TO = 1 << 20;
    static final int SIZE = 512 << 10;
    static final int PIECES_PER_SLAB = 64;
    /** 32 MiB and a page: above the largest size the C library would serve from its heaps. */
    private static final int SLAB_BYTES = PIECES_PER_SLAB * SIZE + 4096;
    static final int SPARE_SLABS = 4;
    static final int IDLE_SECONDS = 10;

    /** A slab and which of its pieces are free (guarded by the class). */
    private static final class Slab {
        final ByteBuffer memory = ByteBuffer.allocateDirect(SLAB_BYTES);
        final int[] free = new int[PIECES_PER_SLAB];
        int freeCount = PIECES_PER_SLAB;

        Slab() {
            for (int i = 0; i < PIECES_PER_SLAB; i++) {
                free[i] = PIECES_PER_SLAB - 1 - i;
            }
        }
    }

    private static final List<Slab> SLABS = new ArrayList<>();
    private static boolean takenSinceTrim;
    private static final ScheduledExecutorService TRIM = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "message-pieces-trim");
        t.setDaemon(true);
        return t;
    });

    static {
        TRIM.scheduleWithFixedDelay(MessagePieces::trimIfIdle, IDLE_SECONDS, IDLE_SECONDS, TimeUnit.SECONDS);
    }

    private MessagePieces() {
    }

    /** A buffer with room for {@code size} bytes, empty; it grows past that as any buffer does. */
    public static ByteBuf forMessage(ByteBufAllocator alloc, int size) {
        if (size <= WHOLE_UP_TO) {
            return alloc.buffer(size);
        }
        CompositeByteBuf pieces = alloc.compositeBuffer(Integer.MAX_VALUE);
        try {
            room(alloc, pieces, size);
        } catch (Throwable t) {
            pieces.release();
            throw t;
        }
        return pieces;
    }

    /** Adds pieces to the composite until {@code bytes} more can be written into it. */
    static void room(ByteBufAllocator alloc, CompositeByteBuf pieces, int bytes) {
        while (pieces.capacity() - pieces.writerIndex() < bytes) {
            // the piece counted in the composite's capacity, not in what was written
            pieces.addComponent(false, take(alloc).writerIndex(SIZE));
        }
    }

    /** Slabs held (tests). */
    static synchronized int slabs() {
        return SLABS.size();
    }

    /**
     * A piece of the first slab with one free (the oldest slabs fill first, so the newest empty
     * first). A new slab is made outside the lock: zeroing 32 MiB would hold up every other loop.
     */
    static ByteBuf take(ByteBufAllocator alloc) {
        Slab made = null;
        while (true) {
            synchronized (MessagePieces.class) {
                takenSinceTrim = true;
                if (made != null) { // kept even if a piece came free meanwhile: a spare slab is trimmed later
                    SLABS.add(made);
                    return new Piece(alloc, made, made.free[--made.freeCount]);
                }
                for (Slab s : SLABS) {
                    if (s.freeCount > 0) {
                        return new Piece(alloc, s, s.free[--s.freeCount]);
                    }
                }
            }
            made = new Slab();
        }
    }

    private static synchronized void giveBack(Slab slab, int index) {
        slab.free[slab.freeCount++] = index;
        if (slab.freeCount == PIECES_PER_SLAB && SLABS.stream().filter(s -> s.freeCount == PIECES_PER_SLAB).count() > SPARE_SLABS) {
            free(slab);
        }
    }

    static synchronized void trimIfIdle() {
        if (takenSinceTrim) {
            takenSinceTrim = false;
            return;
        }
        for (Slab s : List.copyOf(SLABS)) {
            if (s.freeCount == PIECES_PER_SLAB) {
                free(s);
            }
        }
    }

    private static void free(Slab slab) {
        SLABS.remove(slab);
        PlatformDependent.freeDirectBuffer(slab.memory);
    }

    /** A piece: its place in the slab is free again when it is released. */
    private static final class Piece extends UnpooledDirectByteBuf {
        private final Slab slab;
        private final int index;

        Piece(ByteBufAllocator alloc, Slab slab, int index) {
            super(alloc, slab.memory.slice(index * SIZE, SIZE), SIZE); // wraps it without freeing it
            this.slab = slab;
            this.index = index;
            setIndex(0, 0);
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            giveBack(slab, index);
        }
    }
}
