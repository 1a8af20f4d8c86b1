package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import java.util.ArrayList;
import java.util.List;

/** One client request on its way through the filters. */
public final class Request {
    private Frame frame;
    private final String commandName;
    private final List<PendingReplies.Expectation> expectations = new ArrayList<>(1);
    private MessageFilter current;

    Request(Frame frame, String commandName) {
        this.frame = frame;
        this.commandName = commandName;
    }

    /** The message as the client sent it (or as the previous filter replaced it). */
    public Frame frame() {
        return frame;
    }

    /**
     * The command's name (first key of an OP_MSG body or of a legacy {@code $cmd} query),
     * or null for messages that are not commands.
     */
    public String commandName() {
        return commandName;
    }

    /** Asks for the reply to this request to be passed to the current filter's onReply. */
    public void expectReply(Object state) {
        expectations.add(new PendingReplies.Expectation(current, state));
    }

    void replaceFrame(Frame replacement) {
        frame = replacement;
    }

    void enter(MessageFilter filter) {
        current = filter;
    }

    List<PendingReplies.Expectation> expectations() {
        return expectations;
    }
}
