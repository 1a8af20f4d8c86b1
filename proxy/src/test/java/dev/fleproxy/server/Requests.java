package dev.fleproxy.server;

import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.Unpooled;
import java.util.List;

/** Test access to filter requests, as the session builds them: for unit tests of one filter. */
public final class Requests {
    private Requests() {
    }

    /** A request for this message, entered into {@code filter}, as the session would pass it. */
    public static Request of(WireMessage message, MessageFilter filter) {
        Frame frame = new Frame(Unpooled.wrappedBuffer(WireIO.encode(message, 7, 0)));
        Request r = new Request(frame, message instanceof OpMsg ? OpMsg.peekCommandName(frame) : null);
        r.enter(filter);
        return r;
    }

    /** What the filter asked to be handed back with the reply (one entry per expectReply call). */
    public static List<Object> replyStates(Request request) {
        return request.expectations().stream().map(PendingReplies.Expectation::state).toList();
    }

    /** A reply frame for a message. */
    public static Frame reply(WireMessage message) {
        return new Frame(Unpooled.wrappedBuffer(WireIO.encode(message, 8, 7)));
    }
}
