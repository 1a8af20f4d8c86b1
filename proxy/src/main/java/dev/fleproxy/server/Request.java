package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpQuery;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * One client request on its way through the filters. The message is read once, here ({@link
 * #msg}, {@link #query}), and every filter shares that reading; a filter that replaces the message
 * hands the next filter a fresh reading of the replacement.
 */
public final class Request extends InFlight {
    private final List<PendingReplies.Expectation> expectations = new ArrayList<>(2);
    private OpMsgView msg;
    private OpQuery query;
    private MessageFilter current;
    /** For the metrics: when the proxy had read it (0 without metrics), and its policy collection. */
    private long readAtNanos;
    private String collection;

    /** What the filter working on it keeps between its turns (a command it carries out in steps). */
    private Object attachment;
    /** Its line in the audit trail while it is being handled (null: not audited). */
    private dev.fleproxy.audit.AuditEvent audit;
    /** What the admission gate read of it (null: not admitted, or no gate while nothing is encrypted). */
    private dev.fleproxy.protocol.Command command;
    /** The policy the gate admitted it by: every filter after it decides by this one. */
    private dev.fleproxy.policy.Policy policy;

    /** Reads the frame (an OP_MSG's structure and checksum are verified here, once). */
    public Request(Frame frame, ByteBufAllocator alloc) {
        this(frame, alloc, NO_CALLS, Peer.NONE);
    }

    /** A request of a connection whose peer is this one (tests of identities). */
    public Request(Frame frame, ByteBufAllocator alloc, Peer peer) {
        this(frame, alloc, NO_CALLS, peer);
    }

    Request(Frame frame, ByteBufAllocator alloc, UpstreamCalls calls, Peer peer) {
        super(frame, alloc, calls, peer);
        read();
    }

    /**
     * What a filter that answers this request in several steps (each an {@link RequestDecision#await}
     * on its own {@link #calls}) keeps between them; null at first.
     */
    public Object attachment() {
        return attachment;
    }

    public void attach(Object state) {
        attachment = state;
    }

    /** The audit trail's event of this request, once a filter began one; null before or without a trail. */
    public dev.fleproxy.audit.AuditEvent audit() {
        return audit;
    }

    public void audit(dev.fleproxy.audit.AuditEvent event) {
        audit = event;
    }

    /** The command the admission gate admitted, or null if none did. */
    public dev.fleproxy.protocol.Command command() {
        return command;
    }

    /** The policy the admission gate read it by (null if not admitted). */
    public dev.fleproxy.policy.Policy policy() {
        return policy;
    }

    /** The admission gate's reading of this request, by this policy, for the filters after it. */
    public void admit(dev.fleproxy.protocol.Command admitted, dev.fleproxy.policy.Policy by) {
        command = admitted;
        policy = by;
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

    /**
     * Names the encrypted collection this request works on, for the metrics' {@code collection}
     * label (requests to anything outside the policy are counted as {@code other}).
     */
    public void policyCollection(String namespace) {
        collection = namespace;
    }

    /** Asks for the reply to this request to be passed to the current filter's onReply. */
    public void expectReply(Object state) {
        expectations.add(new PendingReplies.Expectation(current, state));
    }

    // ---- the session's side -------------------------------------------------------------------

    /** Takes a filter's replacement, refused if over the message size limit, and reads it. */
    @Override
    void replaceFrame(Frame replacement) {
        if (replacement.length() > MsgHeader.MAX_MESSAGE_SIZE) {
            int size = replacement.length();
            replacement.release();
            throw new TooLargeAfterRewrite(size);
        }
        super.replaceFrame(replacement);
        read();
    }

    void enter(MessageFilter filter) {
        current = filter;
    }

    String collectionLabel() {
        return collection != null ? collection : dev.fleproxy.metrics.ProxyMetrics.OTHER_COLLECTION;
    }

    void readAt(long nanos) {
        readAtNanos = nanos;
    }

    long readAtNanos() {
        return readAtNanos;
    }

    List<PendingReplies.Expectation> expectations() {
        return expectations;
    }
}
