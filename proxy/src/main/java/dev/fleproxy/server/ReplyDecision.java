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

    record Pass() implements ReplyDecision {
    }

    record Replace(Frame frame) implements ReplyDecision {
    }

    record Await(CompletionStage<?> ready, Duration maxWait) implements ReplyDecision {
    }
}
