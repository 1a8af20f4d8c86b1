package dev.fleproxy.server;

import dev.fleproxy.wire.FrameDecoder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sits right before a client connection's {@link FrameDecoder} (after TLS, if any, so it sees
 * message bytes) and bounds what the client can make the proxy hold:
 *
 * <ul>
 * <li><b>clientReadTimeoutMs</b>: a message begun (at least one byte of it in) must be complete
 * within this. Only the client's slowness counts: the clock runs while the proxy has asked for
 * bytes (a read requested, not yet answered) and stands still while the proxy itself is not
 * reading (backpressure, a message parked waiting for keys). A client that trickles a message
 * one byte a second is therefore closed after clientReadTimeoutMs of waiting for it, although
 * every single read is answered within a second.
 * <li><b>maxIdleTimeMs</b> (0 = off): between messages, the same clock with this limit,
 * restarted by every message read or written. Drivers keep pooled connections idle for minutes,
 * so it is off by default.
 * <li><b>maxBufferedMessageBytes</b>: after each read, the bytes of the incomplete message the
 * decoder holds are accounted in {@link ClientBounds}; a read that takes the total over the
 * budget closes the connection(s) holding the largest incomplete messages.
 * </ul>
 *
 * <p>Everything but {@link #held} and {@link #condemned} is touched only on the channel's event
 * loop; the timer is scheduled on it, at most one at a time, and only while a message is
 * incomplete (or idle time is limited).
 */
final class ClientGuard extends ChannelDuplexHandler {

    /** Closes the connection at once (its session and upstream with it), logging why. */
    interface Closer {
        void close(BadInputLog.Reason reason, String text);
    }

    private final ClientBounds bounds;
    private final FrameDecoder decoder;
    private final Closer closer;
    private final long messageLimitNanos;
    private final long idleLimitNanos;

    private ChannelHandlerContext ctx;
    /** A read was requested and no bytes have come since. */
    private boolean readPending;
    private long readPendingSince;
    /** Time spent waiting for the client in the current phase, before the pending read. */
    private long waitedNanos;
    /** The phase: a message is incomplete (else: between messages). */
    private boolean partial;
    private long framesSeen;
    private ScheduledFuture<?> timer;
    private long timerDueAt;
    private boolean released;

    /** Bytes this connection's incomplete message adds to the budget; written on the loop only. */
    private volatile long held;
    private volatile boolean condemned;

    ClientGuard(ClientBounds bounds, FrameDecoder decoder, Closer closer) {
        this.bounds = bounds;
        this.decoder = decoder;
        this.closer = closer;
        this.messageLimitNanos = TimeUnit.MILLISECONDS.toNanos(bounds.limits().clientReadTimeoutMs());
        this.idleLimitNanos = TimeUnit.MILLISECONDS.toNanos(bounds.limits().maxIdleTimeMs());
    }

    long held() {
        return held;
    }

    boolean condemned() {
        return condemned;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        bounds.register(this);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        release();
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        if (!readPending && !released) {
            readPending = true;
            readPendingSince = System.nanoTime();
            armTimer();
        }
        ctx.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (condemned) {
            // over budget and about to close: take nothing more (its eviction may still be queued)
            io.netty.util.ReferenceCountUtil.release(msg);
            evict();
            return;
        }
        if (readPending) {
            waitedNanos += System.nanoTime() - readPendingSince; // the client answered this read
            readPending = false;
        }
        try {
            ctx.fireChannelRead(msg); // the decoder cumulates and emits what is complete, now
        } finally {
            afterDecode();
        }
    }

    private void afterDecode() {
        if (released) {
            return;
        }
        int now = decoder.partialBytes();
        long frames = decoder.framesDecoded();
        boolean nowPartial = now > 0;
        if (frames != framesSeen || !partial || !nowPartial) {
            // A message completed, began, or bytes came between messages: a new phase, a new clock.
            // Only a message that is still the same incomplete one keeps what it has waited.
            waitedNanos = 0;
        }
        framesSeen = frames;
        partial = nowPartial;
        long delta = now - held;
        if (delta != 0) {
            held = now;
            if (bounds.add(delta) && delta > 0) {
                bounds.enforce();
            }
        }
        if (readPending) {
            armTimer(); // a read requested meanwhile was timed for the phase before
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (idleLimitNanos > 0 && !partial) {
            waitedNanos = 0; // a reply went out: not idle
            if (readPending) {
                readPendingSince = System.nanoTime();
            }
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ctx.fireChannelInactive(); // the decoder frees what it held
        release();
    }

    private long limitNanos() {
        return partial ? messageLimitNanos : idleLimitNanos;
    }

    /** Makes sure a check runs by the time the current phase's limit could be reached. */
    private void armTimer() {
        long limit = limitNanos();
        if (limit <= 0) {
            return;
        }
        long dueAt = readPendingSince + Math.max(0, limit - waitedNanos);
        if (timer != null) {
            if (dueAt - timerDueAt >= 0) {
                return; // the pending check comes early enough; it reschedules itself if need be
            }
            timer.cancel(false);
        }
        timerDueAt = dueAt;
        timer = ctx.executor().schedule(this::check, Math.max(0, dueAt - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void check() {
        timer = null;
        if (released) {
            return;
        }
        long limit = limitNanos();
        if (limit <= 0) {
            return;
        }
        long now = System.nanoTime();
        long waited = waitedNanos + (readPending ? now - readPendingSince : 0);
        if (waited >= limit) {
            if (partial) {
                int declared = decoder.partialDeclaredLength();
                closer.close(BadInputLog.Reason.INCOMPLETE_MESSAGE, "closed: message incomplete after "
                        + bounds.limits().clientReadTimeoutMs() + " ms (got " + decoder.partialBytes()
                        + (declared >= 0 ? " of " + declared : "") + " bytes; clientReadTimeoutMs)");
            } else {
                closer.close(BadInputLog.Reason.IDLE, "closed: idle for " + bounds.limits().maxIdleTimeMs()
                        + " ms (maxIdleTimeMs)");
            }
        } else if (readPending) {
            armTimer();
        }
        // not reading: the proxy is the one waiting; the next read request arms the timer again
    }

    /** Over budget and among the largest: closed on its own loop (the caller may be another's). */
    void condemn() {
        condemned = true;
        if (ctx.executor().inEventLoop()) {
            evict();
        } else {
            ctx.executor().execute(this::evict);
        }
    }

    private void evict() {
        if (released) {
            return;
        }
        int declared = decoder.partialDeclaredLength();
        closer.close(BadInputLog.Reason.OVER_BUDGET, "closed: it held " + decoder.partialBytes() + " bytes of an "
                + "incomplete message" + (declared >= 0 ? " (of " + declared + ")" : "") + ", the largest when the "
                + "incomplete messages of all clients passed maxBufferedMessageBytes (" + bounds.limits()
                .maxBufferedMessageBytes() + " bytes)");
    }

    /** The connection is gone: its bytes leave the budget, its timer stops. Idempotent. */
    private void release() {
        if (released) {
            return;
        }
        released = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        long h = held;
        held = 0;
        if (h != 0) {
            bounds.add(-h);
        }
        bounds.unregister(this);
    }
}
