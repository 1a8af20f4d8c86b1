package dev.fleproxy.rewrite.scan;

import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** The call a write's step waited for, as the write resumes: its reply, or what to do without one. */
final class StepCalls {
    private StepCalls() {
    }

    /**
     * The decision when the call has no reply: not yet (the wait ran out: an error answer; some of
     * the write may be done) or never (the connection closed: it is closed for the client too);
     * null when its reply is there ({@link #reply}).
     */
    static RequestDecision unanswered(CompletionStage<Frame> call, String ns, String what) {
        CompletableFuture<Frame> f = call.toCompletableFuture();
        if (!f.isDone()) {
            return RequestDecision.answer(new OpMsg(0, ErrorReplies.document(ProxyError.UPSTREAM_UNAVAILABLE, ns
                    + ": the upstream did not answer the proxy's step of this " + what + " within "
                    + EvaluatedWrite.CALL_WAIT.toSeconds() + " s; some of it may be written")));
        }
        if (f.isCompletedExceptionally()) {
            return RequestDecision.close("the upstream connection closed during a " + what + " the proxy carries out");
        }
        return null;
    }

    static Frame reply(CompletionStage<Frame> call) {
        return call.toCompletableFuture().join();
    }
}
