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

    /**
     * Answer nothing and close the connection, logging why: for requests that cannot get a reply
     * (legacy write opcodes, unacknowledged writes) but must not be forwarded either.
     */
    static RequestDecision close(String reason) {
        return new Close(reason);
    }

    record Close(String reason) implements RequestDecision {
    }

    record Pass() implements RequestDecision {
    }

    record Replace(WireMessage message) implements RequestDecision {
    }

    record Refuse(WireMessage reply) implements RequestDecision {
    }
}
