package dev.fleproxy.rewrite.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The two buffers a batch of candidates is read through on one thread: the batch as stored, copied
 * out of its frame, and the batch decrypted. Both are garbage once the batch has been examined
 * (what is kept of it is copied out), and at tens of batches a second they were two thirds of
 * what the evaluation pool allocated (107 MB a query of 10,000 candidates of 4.4 KB: young
 * collections every 40 ms, their pauses in every connection's latency). So each thread reuses
 * its own, up to {@link #MAX_KEPT} bytes each; a larger batch gets buffers of its own.
 *
 * <p>A batch read through them must not outlive its step: nothing read from it may be kept
 * without being copied (the next batch on the thread overwrites it).
 */
final class BatchBuffers {
    /** The largest buffer a thread keeps (as many threads as the pool and the event loops have). */
    static final int MAX_KEPT = 1024 * 1024;
    private static final ThreadLocal<BatchBuffers> OF_THREAD = ThreadLocal.withInitial(BatchBuffers::new);

    private byte[] stored = new byte[0];
    private byte[] decrypted = new byte[0];

    private BatchBuffers() {
    }

    static BatchBuffers ofThisThread() {
        return OF_THREAD.get();
    }

    /** A buffer for {@code length} bytes of the batch as stored (its contents: whatever was there). */
    byte[] stored(int length) {
        if (stored.length >= length) {
            return stored;
        }
        byte[] b = new byte[length];
        if (length <= MAX_KEPT) {
            stored = b;
        }
        return b;
    }

    /** An empty buffer for the batch decrypted, of about {@code hint} bytes (it grows if it must). */
    ByteBuf decrypted(int hint) {
        if (decrypted.length < hint && hint <= MAX_KEPT) {
            decrypted = new byte[hint];
        }
        return decrypted.length >= hint ? Unpooled.wrappedBuffer(decrypted).clear() : Unpooled.buffer(hint);
    }

    /** After writing: keeps the array {@code out} grew into, if it is not too large to keep. */
    void grown(ByteBuf out) {
        byte[] a = out.array();
        if (a != decrypted && a.length > decrypted.length && a.length <= MAX_KEPT) {
            decrypted = a;
        }
    }
}
