package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.WireMessage;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/** What a {@link MessageFilter} decided about one client request. */
public sealed interface RequestDecision {
    /** Leave the request as it is. */
    RequestDecision PASS = new Pass();

    /** Forward this message instead; it must carry the request's ids ({@link Request#encode} does). */
    static RequestDecision replace(Frame frame) {
        return new Replace(frame);
    }

    /** Do not forward anything; answer the client with this reply (an error, typically). */
    static RequestDecision refuse(WireMessage reply) {
        return new Refuse(reply);
    }

    /**
     * Forward nothing; answer the client with this reply, which the filter made itself (a command
     * it carried out with its own {@link Request#calls}: an update the server could not evaluate).
     */
    static RequestDecision answer(WireMessage reply) {
        return new Answer(reply);
    }

    /**
     * Answer nothing and close the connection, logging why: for requests that cannot get a reply
     * (legacy write opcodes, unacknowledged writes) but must not be forwarded either.
     */
    static RequestDecision close(String reason) {
        return new Close(reason);
    }

    /**
     * Not yet: the request needs something that is being fetched (keys from the KMS). The
     * session parks it, and the messages behind it on the connection, and asks this filter again
     * on the connection's event loop when {@code ready} completes or the wait runs out, whichever
     * comes first ({@link Request#waitedOut} tells which). The wait is {@code maxWait} from the
     * first time the request parked, however often it parks.
     */
    static RequestDecision await(CompletionStage<?> ready, Duration maxWait) {
        return new Await(ready, maxWait);
    }

    /**
     * Answer with this reply (an error), then close the connection, logging why: for a message the
     * proxy will not read on (an opcode it does not know), after which the connection's framing
     * cannot be trusted.
     */
    static RequestDecision refuseAndClose(WireMessage reply, String reason) {
        return new RefuseAndClose(reply, reason);
    }

    record Close(String reason) implements RequestDecision {
    }

    record RefuseAndClose(WireMessage reply, String reason) implements RequestDecision {
    }

    record Pass() implements RequestDecision {
    }

    record Replace(Frame frame) implements RequestDecision {
    }

    record Refuse(WireMessage reply) implements RequestDecision {
    }

    record Answer(WireMessage reply) implements RequestDecision {
    }

    record Await(CompletionStage<?> ready, Duration maxWait) implements RequestDecision {
    }

    /**
     * Not yet: as {@link #await}, for a request whose filter waits for its own {@link Request#calls}
     * (a write it carries out in steps), not for keys.
     */
    static RequestDecision awaitUpstream(CompletionStage<?> ready, Duration maxWait) {
        return new AwaitUpstream(ready, maxWait);
    }

    record AwaitUpstream(CompletionStage<?> ready, Duration maxWait) implements RequestDecision {
    }
}
