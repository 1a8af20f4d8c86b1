package dev.fleproxy.server;

import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * Client → upstream: each request through the filters in order, then forwarded (as received or
 * rewritten), answered with an error reply, parked, or the connection closed. Requests read before
 * the upstream is usable wait here; once it is known unreachable they are answered with why.
 */
final class RequestLane extends Lane<Request> {
    private final List<MessageFilter> filters;
    /** The request parked until its answer may go, if one is (at most one: the lane parks one message). */
    private Held held;

    RequestLane(ProxySession session, List<MessageFilter> filters) {
        super(session, SessionHandler.Side.CLIENT);
        this.filters = filters;
    }

    @Override
    void counted(Frame frame) {
        session.observer().clientBytes(true, frame.length());
    }

    @Override
    boolean mayHandle() {
        return !session.upstreamPending();
    }

    @Override
    void handle(Frame frame) {
        if (session.upstreamFailure() != null) {
            try {
                answerUnavailable(frame);
            } finally {
                frame.release();
            }
            return;
        }
        refuseCompressed(frame);
        Request request = adopt(frame, f -> new Request(f, session.client().alloc(), session.calls(), session.peer()));
        session.observer().read(request);
        continueFrom(request, 0);
    }

    @Override
    void continueFrom(Request request, int from) {
        if (held != null && held.request == request) {
            Held h = held;
            held = null;
            try {
                send(request, h.answer, h.hold); // its hold is over: released, failed or waited out
            } catch (RuntimeException | Error e) {
                request.release();
                throw e;
            }
            return;
        }
        int i = from;
        try {
            for (; i < filters.size(); i++) {
                MessageFilter filter = filters.get(i);
                request.enter(filter);
                RequestDecision decision = filter.onRequest(request);
                if (decision instanceof RequestDecision.Replace replace) {
                    request.replaceFrame(replace.frame());
                } else if (decision instanceof RequestDecision.Answer answer) {
                    answer(request, i, new Answer(answer.reply(), true, null));
                    return;
                } else if (decision instanceof RequestDecision.Refuse refuse) {
                    answer(request, i, new Answer(refuse.reply(), false, null));
                    return;
                } else if (decision instanceof RequestDecision.RefuseAndClose rc) {
                    answer(request, i, new Answer(rc.reply(), false, rc.reason()));
                    return;
                } else if (decision instanceof RequestDecision.Close c) {
                    answered(request, i, null); // nothing is answered, so nothing to hold
                    session.observer().closedBy(request);
                    session.close(BadInputLog.Reason.REFUSED, "closed: " + c.reason());
                    request.release();
                    return;
                } else if (decision instanceof RequestDecision.Await await) {
                    park(request, i, await.ready(), await.maxWait());
                    return;
                } else if (decision instanceof RequestDecision.AwaitUpstream call) {
                    park(request, i, call.ready(), call.maxWait());
                    return;
                }
            }
        } catch (TooLargeAfterRewrite e) {
            WireMessage tooLarge = ErrorReplies.replyTo(request.frame(), ProxyError.TOO_LARGE_AFTER_ENCRYPTION,
                    "the request would be " + e.size + " bytes once encrypted, over the " + MsgHeader.MAX_MESSAGE_SIZE
                            + "-byte message limit; send smaller batches");
            answer(request, i + 1, new Answer(tooLarge, false, null)); // the filter that rewrote it too
            return;
        } catch (RuntimeException | Error e) {
            request.release();
            throw e;
        }
        forward(request);
    }

    /**
     * The proxy's own answer to a request: {@code carriedOut} for a command a filter carried out
     * (else a refusal), {@code closeReason} non-null to close the connection after it.
     */
    private record Answer(WireMessage reply, boolean carriedOut, String closeReason) {
    }

    /** The request parked while its answer is held, with the answer and the hold. */
    private record Held(Request request, Answer answer, AnswerHold hold) {
    }

    /**
     * Tells the filters before {@code by} how the request was answered, then sends the answer, or
     * parks the request until what a filter holds it for is done (its line in the audit trail):
     * the requests behind it wait meanwhile, so answers keep their order.
     */
    private void answer(Request request, int by, Answer a) {
        AnswerHold hold = answered(request, by, a.reply());
        if (hold != null && hold.pending()) {
            held = new Held(request, a, hold);
            park(request, by, hold.ready(), hold.maxWait());
            return;
        }
        send(request, a, hold);
    }

    /** Writes the answer, or what the hold gives instead if it was not released, then closes if asked. */
    private void send(Request request, Answer a, AnswerHold hold) {
        boolean withheld = hold != null && !hold.released();
        WireMessage reply = withheld ? hold.withheld().get() : a.reply();
        if (a.carriedOut() && !withheld) {
            session.observer().answered(request);
        } else {
            session.observer().refused(request.commandName(), ErrorReplies.codeOf(reply));
        }
        refuse(request.frame(), reply);
        if (a.closeReason() != null) {
            session.close(BadInputLog.Reason.REFUSED, "closed: " + a.closeReason());
        }
        request.release();
    }

    /**
     * Tells the filters the request passed through before filter {@code by}, last first, how it
     * was answered; what they hold the answer for, all of it (null: nothing).
     */
    private AnswerHold answered(Request request, int by, WireMessage reply) {
        AnswerHold hold = null;
        for (int j = Math.min(by, filters.size()) - 1; j >= 0; j--) {
            AnswerHold h = filters.get(j).onAnswered(request, reply);
            if (h != null) {
                hold = hold == null ? h : hold.and(h);
            }
        }
        return hold;
    }

    private void forward(Request request) {
        Frame out = request.frame();
        boolean replyComes = !OpMsg.isMoreToCome(out);
        if (session.calls().inUse(out.requestId())) {
            // its reply could not be told from the reply to the proxy's own read
            session.close(BadInputLog.Reason.REFUSED, "closed: a request reused the requestID " + out.requestId()
                    + " of a read the proxy is making on this connection");
            request.release();
            return;
        }
        if (replyComes) {
            session.pending().expect(out.requestId(), request.expectations());
        }
        session.observer().forwarded(request, out, replyComes);
        flow().write(session.upstream(), out.content().retain());
        request.release();
    }

    private void refuse(Frame request, WireMessage reply) {
        if (OpMsg.isMoreToCome(request)) {
            // The client asked for no reply (w:0), so an error cannot be delivered on this connection:
            // closing it is how a server reports a refused unacknowledged write.
            session.close(BadInputLog.Reason.REFUSED,
                    "refused a request sent with moreToCome (unacknowledged); closing the connection");
            return;
        }
        ByteBuf encoded = reply.encode(session.client().alloc(), ProxySession.ownRequestId(), request.requestId());
        session.observer().clientBytes(false, encoded.readableBytes());
        flow().write(session.client(), encoded);
    }

    private void answerUnavailable(Frame frame) {
        session.observer().refused(null, ProxyError.UPSTREAM_UNAVAILABLE.code());
        if (frame.opCode() == OpCode.OP_MSG || frame.opCode() == OpCode.OP_QUERY) {
            WireMessage reply = ErrorReplies.replyTo(frame, ProxyError.UPSTREAM_UNAVAILABLE, session.upstreamFailure());
            session.client().write(reply.encode(session.client().alloc(), ProxySession.ownRequestId(), frame.requestId()));
        }
        session.close(null);
    }
}
