package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/** What a {@link MessageFilter} decided about a reply it asked to see. */
public sealed interface ReplyDecision {
    /** Forward the reply as it is. */
    ReplyDecision PASS = new Pass();

    /** Forward this instead; it must carry the reply's ids ({@link Reply#encode} does). */
    static ReplyDecision replace(Frame frame) {
        return new Replace(frame);
    }

    /** Not yet: as {@link RequestDecision#await}, for a reply (the replies behind it wait too). */
    static ReplyDecision await(CompletionStage<?> ready, Duration maxWait) {
        return new Await(ready, maxWait);
    }

    /**
     * Not yet: as {@link #await}, for a reply whose filter waits for its own {@link UpstreamCalls}:
     * the upstream connection is still read meanwhile (the call's reply comes that way), while the
     * replies behind this one wait in order.
     */
    static ReplyDecision awaitUpstream(CompletionStage<?> ready, Duration maxWait) {
        return new AwaitUpstream(ready, maxWait);
    }

    record AwaitUpstream(CompletionStage<?> ready, Duration maxWait) implements ReplyDecision {
    }

    record Pass() implements ReplyDecision {
    }

    record Replace(Frame frame) implements ReplyDecision {
    }

    record Await(CompletionStage<?> ready, Duration maxWait) implements ReplyDecision {
    }
}
