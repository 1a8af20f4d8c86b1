package dev.fleproxy.server;

import dev.fleproxy.wire.WireMessage;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * What a filter may ask of the proxy's own answer to a request ({@link MessageFilter#onAnswered}):
 * that it wait until {@code ready} completes, and that what {@code withheld} gives go instead if
 * {@code ready} fails or {@code maxWait} passes first (made then, so that it can say why). The audit trail holds every answer until its line
 * is on file. The lane waits as for an await decision: the request parks on the connection's
 * event loop (never blocking it) and the requests behind it wait, so answers keep their order.
 */
public record AnswerHold(CompletionStage<?> ready, Duration maxWait, Supplier<WireMessage> withheld) {
    /** True if the answer may go: {@code ready} completed, and not exceptionally. */
    boolean released() {
        CompletableFuture<?> f = ready.toCompletableFuture();
        return f.isDone() && !f.isCompletedExceptionally();
    }

    boolean pending() {
        return !ready.toCompletableFuture().isDone();
    }

    /** This hold and one a filter in front of its filter asked for: both must release; the front one's withheld answer. */
    AnswerHold and(AnswerHold front) {
        return new AnswerHold(CompletableFuture.allOf(ready.toCompletableFuture(), front.ready.toCompletableFuture()),
                maxWait.compareTo(front.maxWait) > 0 ? maxWait : front.maxWait, front.withheld);
    }
}
