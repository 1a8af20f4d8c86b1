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
        return new Replace(frame, null);
    }

    /** As {@link #replace(Frame)}, with what the new reply says of its command, known as it was written. */
    static ReplyDecision replace(Frame frame, ReplyOutcome outcome) {
        return new Replace(frame, outcome);
    }

    /** Not yet: as {@link RequestDecision#await}, for a reply (the replies behind it wait too). */
    static ReplyDecision await(CompletionStage<?> ready, Duration maxWait) {
        return new Await(ready, maxWait);
    }

    /**
     * Not yet: as {@link #await}, but the upstream connection is still read meanwhile, while the
     * replies behind this one wait in order. For a reply whose filter waits for its own {@link
     * UpstreamCalls} (the call's reply comes that way), and for a wait too short to be worth
     * stopping the reads for (the audit trail's line: stopping and resuming them costs the event
     * loop two epoll_ctl calls per reply).
     */
    static ReplyDecision awaitUpstream(CompletionStage<?> ready, Duration maxWait) {
        return new AwaitUpstream(ready, maxWait);
    }

    record AwaitUpstream(CompletionStage<?> ready, Duration maxWait) implements ReplyDecision {
    }

    record Pass() implements ReplyDecision {
    }

    /** {@code outcome}: null when the filter did not say (it is then read from the frame if asked for). */
    record Replace(Frame frame, ReplyOutcome outcome) implements ReplyDecision {
    }

    record Await(CompletionStage<?> ready, Duration maxWait) implements ReplyDecision {
    }
}
