package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.WireMessage;

/**
 * A step that may rewrite or refuse client requests and rewrite the replies to them. Filters
 * see whole frames and parsed messages; framing, ids, checksums, backpressure and closing are
 * the session's job. A filter that wants to see the reply to a request calls
 * {@link Request#expectReply}; exhaust streams (moreToCome replies) keep coming to it until
 * the last reply of the stream.
 */
public interface MessageFilter {

    RequestDecision onRequest(Request request);

    /**
     * Rewrites a reply this filter asked for. Returns null to forward it unchanged.
     *
     * @param state what the filter passed to {@link Request#expectReply} for the request
     */
    default WireMessage onReply(Frame reply, Object state) {
        return null;
    }
}
