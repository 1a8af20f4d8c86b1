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

    /**
     * A request for this message, entered into {@code filter}, as the session would pass it, and
     * admitted as the admission gate would admit it if it had no objection (its command and $db
     * read, nothing checked: for unit tests of the filters after the gate; {@code AdmissionGateTest}
     * tests the gate, and the fuzz tests run both).
     */
    public static Request of(WireMessage message, MessageFilter filter) {
        Frame frame = new Frame(Unpooled.wrappedBuffer(WireIO.encode(message, 7, 0)));
        Request r = new Request(frame, ByteBufAllocator.DEFAULT);
        r.enter(filter);
        admitted(r);
        return r;
    }

    private static void admitted(Request r) {
        if (r.msg() != null && r.msg().bodyString("$db") != null) {
            String name = r.msg().commandName();
            r.admit(new dev.fleproxy.protocol.Command(name, dev.fleproxy.protocol.CommandTable.get(name),
                    r.msg().bodyString("$db"), false));
        } else if (r.query() != null && dev.fleproxy.protocol.CommandTable.isHello(r.commandName())) {
            r.admit(new dev.fleproxy.protocol.Command(r.commandName(),
                    dev.fleproxy.protocol.CommandTable.get(r.commandName()), "admin", true));
        }
    }

    /**
     * A request for this frame, read as the session reads it (a malformed OP_MSG throws
     * WireProtocolException here), entered into {@code filter}.
     */
    public static Request of(Frame frame, ByteBufAllocator alloc, MessageFilter filter) {
        Request r = new Request(frame, alloc);
        r.enter(filter);
        admitted(r);
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
