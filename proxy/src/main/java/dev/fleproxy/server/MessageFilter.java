package dev.fleproxy.server;

/**
 * A step that may rewrite or refuse client requests and rewrite the replies to them. Filters
 * see each message read once ({@link Request#msg}); framing, ids, checksums, ordering,
 * backpressure and closing are the session's job. A filter that wants to see the reply to a
 * request calls {@link Request#expectReply}; exhaust streams (moreToCome replies) keep coming to
 * it until the last reply of the stream. Filters run on the connection's event loop and must
 * never wait there: what needs I/O (a key from the KMS) is answered with an await decision.
 */
public interface MessageFilter {

    RequestDecision onRequest(Request request);

    /**
     * Rewrites a reply this filter asked for.
     *
     * @param state what the filter passed to {@link Request#expectReply} for the request
     */
    default ReplyDecision onReply(Reply reply, Object state) {
        return ReplyDecision.PASS;
    }

    /**
     * A filter after this one answered the request itself (a refusal, or the proxy's own answer:
     * {@code reply}) or closed the connection instead ({@code reply} null): nothing of it reaches
     * the server. Called, last filter first, on every filter the request passed through before, and
     * before the answer is written to the client.
     *
     * @return null to let the answer go at once, or what it must wait for ({@link AnswerHold}; not
     *         for a close, which answers nothing)
     */
    default AnswerHold onAnswered(Request request, dev.fleproxy.wire.WireMessage reply) {
        return null;
    }
}
