package dev.fleproxy.server;

import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.List;

/** Test access to filter requests and replies, as the session builds them: for unit tests of one filter. */
public final class Requests {
    private Requests() {
    }

    /** A request for this message, entered into {@code filter}, as the session would pass it (not admitted). */
    public static Request of(WireMessage message, MessageFilter filter) {
        Frame frame = new Frame(Unpooled.wrappedBuffer(WireIO.encode(message, 7, 0)));
        Request r = new Request(frame, ByteBufAllocator.DEFAULT);
        r.enter(filter);
        return r;
    }

    /**
     * A request for this message as the filters after the admission gate get it: admitted by the
     * real gate under {@code policy} (which must admit it), entered into {@code filter}.
     */
    public static Request admitted(WireMessage message, MessageFilter filter, dev.fleproxy.policy.Policy policy) {
        Request r = of(message, filter);
        RequestDecision d = new dev.fleproxy.admission.AdmissionGate(() -> policy).onRequest(r);
        if (d != RequestDecision.PASS) {
            throw new AssertionError("the admission gate did not admit the request: " + d);
        }
        r.enter(filter);
        return r;
    }

    /**
     * A request for this frame, read as the session reads it (a malformed OP_MSG throws
     * WireProtocolException here), entered into {@code filter}.
     */
    public static Request of(Frame frame, ByteBufAllocator alloc, MessageFilter filter) {
        Request r = new Request(frame, alloc);
        r.enter(filter);
        return r;
    }

    /** The same request asked again after its wait for keys ran out. */
    public static Request waitedOut(Request request) {
        request.waitedOut(true);
        return request;
    }

    /** What the filter asked to be handed back with the reply (one entry per expectReply call). */
    public static List<Object> replyStates(Request request) {
        return request.expectations().stream().map(PendingReplies.Expectation::state).toList();
    }

    /** A reply frame for a message. */
    public static Frame reply(WireMessage message) {
        return new Frame(Unpooled.wrappedBuffer(WireIO.encode(message, 8, 7)));
    }

    /** A reply as the session hands it to a filter. */
    public static Reply replyOf(WireMessage message) {
        return new Reply(reply(message), ByteBufAllocator.DEFAULT);
    }

    /** The same reply asked again after its wait for keys ran out. */
    public static Reply waitedOut(Reply reply) {
        reply.waitedOut(true);
        return reply;
    }
}
