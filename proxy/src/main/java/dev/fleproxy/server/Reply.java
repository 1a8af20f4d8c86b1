package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.ByteBufAllocator;

/** A reply a filter asked to see, read once and shared by the filters that asked. */
public final class Reply {
    private final Frame received;
    private final ByteBufAllocator alloc;
    private Frame frame;
    private OpMsgView msg;
    private long parkedSinceNanos;
    private boolean keyWaitExpired;

    public Reply(Frame frame, ByteBufAllocator alloc) {
        this.received = frame;
        this.frame = frame;
        this.alloc = alloc;
    }

    public Frame frame() {
        return frame;
    }

    public int opCode() {
        return frame.opCode();
    }

    /** The OP_MSG, read on first use (structure and checksum verified); null for other opcodes. */
    public OpMsgView msg() {
        if (msg == null && frame.opCode() == OpCode.OP_MSG) {
            msg = OpMsgView.of(frame);
        }
        return msg;
    }

    public ByteBufAllocator alloc() {
        return alloc;
    }

    /** A message encoded as a replacement of this reply: same requestID and responseTo. */
    public Frame encode(WireMessage message) {
        return new Frame(message.encode(alloc, frame.requestId(), frame.responseTo()));
    }

    /** True when this reply waited for keys and the wait is over (see {@link Request#keyWaitExpired}). */
    public boolean keyWaitExpired() {
        return keyWaitExpired;
    }

    // ---- the session's side -------------------------------------------------------------------

    void replaceFrame(Frame replacement) {
        if (frame != received) {
            frame.release();
        }
        frame = replacement;
        msg = null;
    }

    Frame received() {
        return received;
    }

    long parkedSinceNanos() {
        return parkedSinceNanos;
    }

    void parkedAt(long nanos) {
        if (parkedSinceNanos == 0) {
            parkedSinceNanos = nanos;
        }
    }

    void keyWaitExpired(boolean expired) {
        keyWaitExpired = expired;
    }

    void release() {
        if (frame != received && frame.refCnt() > 0) {
            frame.release();
        }
        if (received.refCnt() > 0) {
            received.release();
        }
    }
}
