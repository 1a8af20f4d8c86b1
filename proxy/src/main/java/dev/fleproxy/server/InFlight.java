package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.ByteBufAllocator;

/**
 * What a request and a reply have in common on their way through the filters: the frame as
 * received and as replaced, the allocator for replacements, and the wait they may have to sit
 * through (see {@link RequestDecision#await}).
 */
abstract class InFlight {
    private final Frame received;
    private final ByteBufAllocator alloc;
    Frame frame;
    private final UpstreamCalls calls;
    private final Peer peer;
    private long parkedSinceNanos;
    private boolean waitedOut;

    /** No upstream connection to call: a message made outside a session (tests, benchmarks). */
    static final UpstreamCalls NO_CALLS = body -> java.util.concurrent.CompletableFuture.failedFuture(
            new IllegalStateException("no upstream connection to call"));

    InFlight(Frame frame, ByteBufAllocator alloc, UpstreamCalls calls, Peer peer) {
        this.received = frame;
        this.frame = frame;
        this.alloc = alloc;
        this.calls = calls;
        this.peer = peer;
    }

    /** What the proxy has verified about the client connection this message belongs to. */
    public Peer peer() {
        return peer;
    }

    /** Commands the filter may send on this message's upstream connection before it decides. */
    public UpstreamCalls calls() {
        return calls;
    }

    /** The message as it arrived, or as the previous filter replaced it. */
    public Frame frame() {
        return frame;
    }

    public int opCode() {
        return frame.opCode();
    }

    public ByteBufAllocator alloc() {
        return alloc;
    }

    /** A message encoded as a replacement of this one: same requestID and responseTo. */
    public Frame encode(WireMessage message) {
        return new Frame(message.encode(alloc, frame.requestId(), frame.responseTo()));
    }

    /**
     * True when this message waited (a filter answered await) and the wait it asked for is over:
     * what is still missing now counts as unavailable instead of being waited for.
     */
    public boolean waitedOut() {
        return waitedOut;
    }

    /** Takes a filter's replacement (owned from now on); the previous replacement is released. */
    void replaceFrame(Frame replacement) {
        if (frame != received) {
            frame.release();
        }
        frame = replacement;
    }

    /** Whether a filter replaced the message (it is forwarded rewritten). */
    boolean replaced() {
        return frame != received;
    }

    Frame received() {
        return received;
    }

    /** When this message first waited (System.nanoTime), 0 if never. */
    long parkedSinceNanos() {
        return parkedSinceNanos;
    }

    void parkedAt(long nanos) {
        if (parkedSinceNanos == 0) {
            parkedSinceNanos = nanos;
        }
    }

    void waitedOut(boolean over) {
        waitedOut = over;
    }

    /** Releases the received frame and any replacement. */
    void release() {
        if (frame != received && frame.refCnt() > 0) {
            frame.release();
        }
        if (received.refCnt() > 0) {
            received.release();
        }
    }
}
