package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.WireProtocolException;

/**
 * Upstream → client: each reply through the filters that asked to see it when its request went
 * out ({@link PendingReplies}), in order, then written to the client; a reply waiting for keys
 * parks, and the replies behind it (an exhaust stream's too) wait.
 */
final class ReplyLane extends Lane<Reply> {
    ReplyLane(ProxySession session) {
        super(session, SessionHandler.Side.UPSTREAM);
    }

    @Override
    void counted(Frame frame) {
        session.observer().upstreamBytes(true, frame.length());
    }

    @Override
    boolean intercepted(Frame frame) {
        if (session.targets().followsPrimary()) {
            String notPrimary = NotPrimaryReply.of(frame);
            if (notPrimary != null) {
                // not passed on, whether it answers the client's command or one of the proxy's own
                // steps for it (a write or read it carries out): the session closes, and the driver
                // retries on a connection to the new primary (issue 41)
                frame.release();
                session.targets().notPrimary(session.upstreamAddress(), notPrimary);
                session.failover("upstream " + session.upstreamAddress() + " answered " + notPrimary);
                return true;
            }
        }
        return session.calls().complete(frame);
    }

    @Override
    void handle(Frame frame) {
        refuseCompressed(frame);
        Reply reply = adopt(frame, f -> new Reply(f, session.client().alloc(), session.calls(), session.peer()).expectedBy(session.pending().take(f)));
        session.observer().read(reply);
        continueFrom(reply, 0);
    }

    @Override
    void continueFrom(Reply reply, int from) {
        try {
            for (int i = from; i < reply.expectations().size(); i++) {
                PendingReplies.Expectation e = reply.expectations().get(i);
                ReplyDecision decision = e.filter().onReply(reply, e.state());
                if (decision instanceof ReplyDecision.Replace replace) {
                    reply.replaceFrame(replace.frame(), replace.outcome());
                } else if (decision instanceof ReplyDecision.Await await) {
                    park(reply, i, await.ready(), await.maxWait());
                    return;
                } else if (decision instanceof ReplyDecision.AwaitUpstream call) {
                    park(reply, i, call.ready(), call.maxWait(), false);
                    return;
                }
            }
            Frame out = reply.frame();
            if (out.length() > MsgHeader.MAX_MESSAGE_SIZE) {
                throw new WireProtocolException("a rewritten reply would be " + out.length() + " bytes");
            }
            flow().write(session.client(), out.content().retain());
            session.observer().written(reply, out);
            if (OpMsg.isMoreToCome(reply.received()) && !OpMsg.isMoreToCome(out)) {
                session.label("exhaust_ended");
                // A filter ended an exhaust stream early (with an error): the upstream would keep
                // streaming, so the pair cannot stay in step.
                session.close("closed: an exhaust stream was ended early by an error reply");
            }
        } finally {
            if (!isParked(reply)) {
                reply.release();
            }
        }
    }
}
