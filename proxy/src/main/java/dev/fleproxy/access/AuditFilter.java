package dev.fleproxy.access;

import dev.fleproxy.audit.AuditEvent;
import dev.fleproxy.audit.AuditLog;
import dev.fleproxy.audit.AuditMemo;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldAccess;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Command;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.server.AnswerHold;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.ReplyOutcome;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.WireMessage;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;

/**
 * The audit trail, a filter of its own in front of the access rules and the encryption filter
 * (docs/access.md, "The audit trail"): an event begun for each request on an encrypted collection
 * (a bulkWrite under its first encrypted namespace), its fields listed with what the connection's
 * identity gets of each (revealed, masked, refused; written for a write), and written once the
 * outcome is known: the proxy's own answer (a refusal, a write it carried out), or the server's
 * reply once the filters after this one have decrypted and masked it. The answer waits until its
 * line is on file, and is replaced by an error (9720042) if the line cannot be written.
 * With identities but no trail, the events only count requests by identity.
 */
public final class AuditFilter implements MessageFilter {
    /** The trail, or null: then only the metrics by identity. */
    private final AuditLog log;
    private final ProxyMetrics metrics;

    public AuditFilter(AuditLog log, ProxyMetrics metrics) {
        this.log = log;
        this.metrics = metrics;
    }

    @Override
    public RequestDecision onRequest(Request request) {
        Command command = request.command();
        Policy p = request.policy();
        if (command == null || command.target() == null || command.legacyHandshake()
                || log == null && p.identities().byName().isEmpty()) {
            return RequestDecision.PASS;
        }
        AuditEvent begun = request.audit();
        if (begun != null) {
            return unacknowledgedRecorded(request, begun); // back after waiting for its line
        }
        if (log != null && !log.admits()) {
            return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), ProxyError.AUDIT_UNAVAILABLE,
                    command.target() + ": the audit trail cannot keep up (or cannot be written), and audit.onFull is "
                            + "refuse: no request on an encrypted collection goes unrecorded; try again"));
        }
        CollectionPolicy cp = p.get(command.target());
        String identity = request.peer().identity(p.identities());
        AuditMemo memo = request.peer().auditMemo();
        AuditMemo.Scope scope = memo.scope(cp, command.spec(), identity);
        if (scope == null) {
            scope = memo.remember(cp, command.spec(), identity, scope(command.spec(), cp, identity));
        }
        metrics.identity(identity, scope.outcomes());
        if (log != null) {
            AuditEvent e = new AuditEvent(System.currentTimeMillis(), memo.who(request.peer().connection(), identity,
                    request.peer().address()), scope.what());
            request.audit(e);
            if (OpMsg.isMoreToCome(request.frame())) {
                // an unacknowledged write gets no answer to hold: its line (code -1, none to name)
                // is on file before the write goes on, whatever the filters after decide
                log.write(e.code(-1));
                metrics.audit(!e.dropped());
                return unacknowledgedRecorded(request, e);
            }
            request.expectReply(e);
        }
        return RequestDecision.PASS;
    }

    /** An unacknowledged write goes on once its line is on file; if the line cannot be, the connection closes. */
    private static RequestDecision unacknowledgedRecorded(Request request, AuditEvent e) {
        if (e.written() == null) {
            return RequestDecision.PASS; // dropped (onFull: drop), and counted
        }
        CompletableFuture<Void> line = e.written().toCompletableFuture();
        if (!line.isDone()) {
            return request.waitedOut() ? RequestDecision.close("the audit trail did not record an unacknowledged write")
                    : RequestDecision.await(line, MAX_WAIT);
        }
        return line.isCompletedExceptionally()
                ? RequestDecision.close("the audit trail could not record an unacknowledged write") : RequestDecision.PASS;
    }

    /**
     * Answered by the proxy (a refusal, a write it carried out) or closed (no reply): its line now,
     * and the answer held until the line is on file (a close answers nothing: nothing to hold).
     */
    @Override
    public AnswerHold onAnswered(Request request, WireMessage reply) {
        AuditEvent e = request.audit();
        if (e == null) {
            return null;
        }
        log.write(reply instanceof OpMsg m ? outcome(e, m.body()) : e.code(-1)); // -1: closed unanswered
        metrics.audit(!e.dropped());
        return reply == null ? null : new AnswerHold(e.written(), MAX_WAIT, () -> withheld(request.frame()));
    }

    /**
     * The server's reply, as the client gets it (decrypted and masked): the outcome, then the line;
     * the reply (and those behind it) waits until the line is on file. Called again when that wait
     * is over: the line is not written twice ({@link AuditLog#write} hands an event over once).
     */
    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        if (!(state instanceof AuditEvent e) || reply.opCode() != OpCode.OP_MSG) {
            return ReplyDecision.PASS;
        }
        if (e.written() == null) {
            log.write(outcome(e, reply.outcome()));
            metrics.audit(!e.dropped());
        }
        // the writer completes the line on its own thread: decide on one reading of "done" (a line
        // that completes between two readings must not count as neither waiting nor written)
        CompletableFuture<Void> line = e.written().toCompletableFuture();
        if (!line.isDone()) {
            return reply.waitedOut() ? ReplyDecision.replace(reply.encode(withheld(reply.frame())))
                    : ReplyDecision.awaitUpstream(line, MAX_WAIT); // the upstream is still read: a short wait
        }
        return line.isCompletedExceptionally() ? ReplyDecision.replace(reply.encode(withheld(reply.frame())))
                : ReplyDecision.PASS;
    }

    /**
     * How long an answer waits for its line at most. The writer writes what waits at once, so
     * this is only reached when the file hangs (a stalled network disk): the answer is withheld.
     */
    private static final Duration MAX_WAIT = Duration.ofSeconds(10);

    /** The error that replaces an answer whose line did not reach the file (9720042). */
    private WireMessage withheld(Frame answering) {
        return ErrorReplies.replyTo(answering, ProxyError.AUDIT_UNAVAILABLE, "the answer is withheld: its line could "
                + "not be written to the audit trail" + (log.failed() ? " (its file cannot be written; requests on "
                + "encrypted collections are refused until the proxy is restarted with room for it)"
                : " in time") + "; the command may have taken effect on the server");
    }

    /** What a command's lines on this collection say of its fields for this identity (made once per connection). */
    private static AuditMemo.Scope scope(CommandSpec spec, CollectionPolicy cp, String identity) {
        boolean writes = spec.rewriter() == CommandSpec.Rewriter.INSERT || spec.rewriter() == CommandSpec.Rewriter.UPDATE;
        Map<String, String> fields = new LinkedHashMap<>();
        for (FieldRule r : cp.fields().values()) {
            fields.merge(r.path(), writes ? "written" : outcome(r.access(), identity), (a, b) -> a.equals(b) ? a : a + "+" + b);
        }
        if (cp.allFields()) {
            fields.merge("*", writes ? "written" : "revealed", (a, b) -> a.equals(b) ? a : a + "+" + b);
        }
        Map<String, Integer> outcomes = new LinkedHashMap<>();
        for (String o : fields.values()) {
            outcomes.merge(o, 1, Integer::sum);
        }
        return new AuditMemo.Scope(AuditEvent.what(spec.name(), cp.namespace(), fields), Map.copyOf(outcomes));
    }

    private static String outcome(FieldAccess a, String identity) {
        FieldAccess.Mask m = a.maskFor(identity);
        return m == null ? "revealed" : m == FieldAccess.Mask.DENY ? "refused" : "masked:" + m.name().toLowerCase(Locale.ROOT);
    }

    /** The line's code and documents from what the reply says of its command. */
    private static AuditEvent outcome(AuditEvent e, ReplyOutcome o) {
        e.code(o.code());
        if (o.documents() >= 0) { // only an ok reply says how many
            e.documents(o.documents());
        }
        return e;
    }

    /** The code (0, an error's, the first write error's) and how many documents the answer held. */
    private static AuditEvent outcome(AuditEvent e, BsonDocument body) {
        boolean ok = body.isNumber("ok") && body.getNumber("ok").doubleValue() == 1.0;
        int code = !ok ? (body.isNumber("code") ? body.getNumber("code").intValue() : -1)
                : body.isArray("writeErrors") && !body.getArray("writeErrors").isEmpty()
                && body.getArray("writeErrors").get(0).isDocument()
                && body.getArray("writeErrors").get(0).asDocument().isNumber("code")
                ? body.getArray("writeErrors").get(0).asDocument().getNumber("code").intValue() : 0;
        e.code(code);
        if (ok && body.isDocument("cursor")) {
            BsonDocument c = body.getDocument("cursor");
            e.documents(c.isArray("firstBatch") ? c.getArray("firstBatch").size()
                    : c.isArray("nextBatch") ? c.getArray("nextBatch").size() : 0);
        } else if (ok && body.containsKey("value")) {
            e.documents(body.get("value").isNull() ? 0 : 1);
        } else if (ok && body.isNumber("n")) {
            e.documents(body.getNumber("n").longValue());
        }
        return e;
    }
}
