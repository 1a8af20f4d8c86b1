package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which filters wait for which reply on one connection. A reply answers the request whose
 * requestID is its responseTo; a reply with moreToCome is followed by one whose responseTo is
 * that reply's own requestID (OP_MSG spec), so the expectation moves along the exhaust stream
 * and ends with the stream's last reply. Only requests a filter asked about are tracked.
 */
final class PendingReplies {
    record Expectation(MessageFilter filter, Object state) {
    }

    private final Map<Integer, List<Expectation>> byRequestId = new HashMap<>();

    /**
     * The filters a request's reply goes to, in the reverse of the order they saw the request (the
     * last filter first, as the request's rewrites are undone in the reverse order they were made):
     * a filter in front of the encryption filter (the audit trail) sees the reply as the client will.
     */
    void expect(int requestId, List<Expectation> expectations) {
        if (!expectations.isEmpty()) {
            List<Expectation> reversed = new java.util.ArrayList<>(expectations);
            java.util.Collections.reverse(reversed);
            byRequestId.put(requestId, List.copyOf(reversed));
        }
    }

    /** The expectations a reply satisfies (empty if nobody asked). */
    List<Expectation> take(Frame reply) {
        if (byRequestId.isEmpty()) {
            return List.of();
        }
        List<Expectation> found = byRequestId.remove(reply.responseTo());
        if (found == null) {
            return List.of();
        }
        if (OpMsg.isMoreToCome(reply)) {
            byRequestId.put(reply.requestId(), found);
        }
        return found;
    }

    /** True if a tracked request with this requestID waits for its reply. */
    boolean waitsFor(int requestId) {
        return byRequestId.containsKey(requestId);
    }

    int size() {
        return byRequestId.size();
    }
}
