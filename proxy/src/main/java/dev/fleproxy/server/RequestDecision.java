package dev.fleproxy.server;

import dev.fleproxy.wire.WireMessage;

/** What a {@link MessageFilter} decided about one client request. */
public sealed interface RequestDecision {
    /** Leave the request as it is. */
    RequestDecision PASS = new Pass();

    /** Forward this message instead (same requestID). */
    static RequestDecision replace(WireMessage message) {
        return new Replace(message);
    }

    /** Do not forward anything; answer the client with this reply (an error, typically). */
    static RequestDecision refuse(WireMessage reply) {
        return new Refuse(reply);
    }

    record Pass() implements RequestDecision {
    }

    record Replace(WireMessage message) implements RequestDecision {
    }

    record Refuse(WireMessage reply) implements RequestDecision {
    }
}
