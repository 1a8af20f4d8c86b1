package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsgView;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;

/** A reply a filter asked to see, read once and shared by the filters that asked. */
public final class Reply extends InFlight {
    private OpMsgView msg;
    /** What the reply says of its command: as the filter that wrote it said, else read on first use. */
    private ReplyOutcome outcome;
    /** For the metrics: the request this reply answers (null if untimed), and when it was read. */
    private RequestTiming timing;
    private long readAtNanos;
    /** The filters that asked to see it, each with its state from the request (set when it is read). */
    private List<PendingReplies.Expectation> expectations = List.of();

    public Reply(Frame frame, ByteBufAllocator alloc) {
        this(frame, alloc, NO_CALLS, Peer.NONE);
    }

    /** A reply on a connection whose peer is this one (tests of identities). */
    public Reply(Frame frame, ByteBufAllocator alloc, Peer peer) {
        this(frame, alloc, NO_CALLS, peer);
    }

    Reply(Frame frame, ByteBufAllocator alloc, UpstreamCalls calls, Peer peer) {
        super(frame, alloc, calls, peer);
    }

    /** The OP_MSG, read on first use (structure and checksum verified); null for other opcodes. */
    public OpMsgView msg() {
        if (msg == null && frame.opCode() == OpCode.OP_MSG) {
            msg = OpMsgView.of(frame);
        }
        return msg;
    }

    /** What this reply (as it now stands: decrypted, masked) says of its command; null for other opcodes. */
    public ReplyOutcome outcome() {
        if (outcome == null && msg() != null) {
            outcome = ReplyOutcome.of(msg().bodyBytes());
        }
        return outcome;
    }

    Reply expectedBy(List<PendingReplies.Expectation> filters) {
        expectations = filters;
        return this;
    }

    List<PendingReplies.Expectation> expectations() {
        return expectations;
    }

    void timed(RequestTiming t, long nanos) {
        timing = t;
        readAtNanos = nanos;
    }

    RequestTiming timing() {
        return timing;
    }

    long readAtNanos() {
        return readAtNanos;
    }

    @Override
    void replaceFrame(Frame replacement) {
        replaceFrame(replacement, null);
    }

    void replaceFrame(Frame replacement, ReplyOutcome said) {
        super.replaceFrame(replacement);
        msg = null;
        outcome = said;
    }
}
