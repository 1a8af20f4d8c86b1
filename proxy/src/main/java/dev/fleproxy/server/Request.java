package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * One client request on its way through the filters. The message is read once, here ({@link
 * #msg}, {@link #query}), and every filter shares that reading; a filter that replaces the message
 * hands the next filter a fresh reading of the replacement.
 */
public final class Request {
    private final Frame received;
    private final ByteBufAllocator alloc;
    private final List<PendingReplies.Expectation> expectations = new ArrayList<>(1);
    private Frame frame;
    private OpMsgView msg;
    private OpQuery query;
    private MessageFilter current;
    private long parkedSinceNanos;
    private boolean keyWaitExpired;

    /** Reads the frame (an OP_MSG's structure and checksum are verified here, once). */
    public Request(Frame frame, ByteBufAllocator alloc) {
        this.received = frame;
        this.frame = frame;
        this.alloc = alloc;
        read();
    }

    private void read() {
        msg = null;
        query = null;
        if (frame.opCode() == OpCode.OP_MSG) {
            msg = OpMsgView.of(frame);
        } else if (frame.opCode() == OpCode.OP_QUERY) {
            query = OpQuery.parse(frame);
        }
    }

    /** The message as the client sent it (or as the previous filter replaced it). */
    public Frame frame() {
        return frame;
    }

    public int opCode() {
        return frame.opCode();
    }

    /** The OP_MSG, read once; null for other opcodes. */
    public OpMsgView msg() {
        return msg;
    }

    /** The legacy OP_QUERY, parsed once; null for other opcodes. */
    public OpQuery query() {
        return query;
    }

    /**
     * The command's name (first key of an OP_MSG body or of a legacy {@code $cmd} query), or null
     * for messages that are not commands.
     */
    public String commandName() {
        if (msg != null) {
            return msg.commandName();
        }
        if (query != null && query.isCommand()) {
            return query.command().isEmpty() ? "" : query.command().getFirstKey();
        }
        return null;
    }

    public ByteBufAllocator alloc() {
        return alloc;
    }

    /** A message encoded as a replacement of this request: same requestID and responseTo. */
    public Frame encode(WireMessage message) {
        return new Frame(message.encode(alloc, frame.requestId(), frame.responseTo()));
    }

    /** Asks for the reply to this request to be passed to the current filter's onReply. */
    public void expectReply(Object state) {
        expectations.add(new PendingReplies.Expectation(current, state));
    }

    /**
     * True when this request waited for keys (a filter answered {@link RequestDecision#await}) and
     * the wait is over: keys still missing now count as unavailable instead of being waited for.
     */
    public boolean keyWaitExpired() {
        return keyWaitExpired;
    }

    // ---- the session's side -------------------------------------------------------------------

    /** Takes a filter's replacement (owned from now on); the previous replacement is released. */
    void replaceFrame(Frame replacement) {
        if (replacement.length() > MsgHeader.MAX_MESSAGE_SIZE) {
            int size = replacement.length();
            replacement.release();
            throw new TooLargeAfterRewrite(size);
        }
        if (frame != received) {
            frame.release();
        }
        frame = replacement;
        read();
    }

    void enter(MessageFilter filter) {
        current = filter;
    }

    List<PendingReplies.Expectation> expectations() {
        return expectations;
    }

    /** When this request first waited for keys (System.nanoTime), 0 if never. */
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

    Frame received() {
        return received;
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
