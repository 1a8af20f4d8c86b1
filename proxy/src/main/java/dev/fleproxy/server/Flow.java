package dev.fleproxy.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import java.util.function.Consumer;

/**
 * Read-after-write backpressure for one direction. The source channel runs with AUTO_READ off;
 * what one read brought in is written out, and the source is read again only when every one of
 * those writes has reached the socket. A slow receiver therefore stalls the sender instead of
 * growing the proxy's buffers: at most one read's worth of frames (and the one message being
 * assembled) is held per direction. While a message of this direction waits for keys, or the
 * far side is not connected yet, the flow is held: nothing more is read from the source until
 * it is released. All calls happen on the pair's single event loop.
 */
final class Flow {
    private final Channel source;
    private final Consumer<Throwable> onWriteFailure;
    private final ChannelFutureListener writeDone = this::writeDone;
    private int inFlight;
    private boolean batchDone;
    private boolean held;
    private Channel dirtyA;
    private Channel dirtyB;

    Flow(Channel source, Consumer<Throwable> onWriteFailure) {
        this.source = source;
        this.onWriteFailure = onWriteFailure;
    }

    /** Queues a message on target; it is flushed when the current read completes. */
    void write(Channel target, Object msg) {
        inFlight++;
        if (dirtyA == null || dirtyA == target) {
            dirtyA = target;
        } else {
            dirtyB = target;
        }
        target.write(msg).addListener(writeDone);
    }

    /** The source's read batch is over: flush what it produced, read again once written. */
    void readComplete() {
        flush();
        batchDone = true;
        maybeRead();
    }

    /** Flushes what was written since the last flush (after a parked message resumed). */
    void flush() {
        if (dirtyA != null) {
            dirtyA.flush();
            dirtyA = null;
        }
        if (dirtyB != null) {
            dirtyB.flush();
            dirtyB = null;
        }
    }

    /** Stops reading the source until {@link #release}: a message of this direction is parked. */
    void hold() {
        held = true;
    }

    boolean isHeld() {
        return held;
    }

    /**
     * Ends a hold (the parked message went on, or the far side became ready): as at the end of a
     * read, the source is read again once what was written has reached the socket.
     */
    void release() {
        held = false;
        batchDone = true;
        maybeRead();
    }

    private void writeDone(ChannelFuture future) {
        inFlight--;
        if (!future.isSuccess()) {
            onWriteFailure.accept(future.cause());
            return;
        }
        maybeRead();
    }

    private void maybeRead() {
        if (batchDone && inFlight == 0 && !held && source.isActive()) {
            batchDone = false;
            source.read();
        }
    }
}
