package dev.fleproxy.rewrite;

import dev.fleproxy.audit.AuditEvent;
import dev.fleproxy.audit.AuditLog;
import dev.fleproxy.audit.AuditMemo;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldAccess;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.BsonCursor;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.bson.BsonDocument;

/**
 * The audit trail's side of the filter (docs/access.md, "The audit trail"): an event begun for each
 * request on an encrypted collection, its fields listed with what the connection's identity gets
 * of each (revealed, masked, refused; written for a write), and written once the outcome is known:
 * when the proxy answers the request itself, or when the server's reply to it has passed.
 */
final class Auditing {
    private Auditing() {
    }

    /** True if requests on encrypted collections are followed: an audit trail, or identities to count by. */
    static boolean follows(Policy p, AuditLog log) {
        return log != null || !p.identities().byName().isEmpty();
    }

    /**
     * The request's event (begun once, on its first turn), counted by identity; refused when the
     * trail cannot take it.
     */
    static void begin(Request request, CommandSpec spec, CollectionPolicy cp, Policy p, AuditLog log,
                      ProxyMetrics metrics) {
        if (request.audit() != null) {
            return;
        }
        if (log != null && !log.admits()) {
            throw new Refusal(ProxyError.AUDIT_UNAVAILABLE, cp.namespace() + ": the audit trail cannot keep up (or "
                    + "cannot be written), and audit.onFull is refuse: no request on an encrypted collection goes "
                    + "unrecorded; try again");
        }
        String identity = request.peer().identity(p.identities());
        AuditMemo memo = request.peer().auditMemo();
        AuditMemo.Scope scope = memo.scope(cp, spec, identity);
        if (scope == null) {
            scope = memo.remember(cp, spec, identity, scope(spec, cp, identity));
        }
        request.audit(new AuditEvent(System.currentTimeMillis(), memo.who(request.peer().connection(), identity,
                request.peer().address()), scope.what()));
        metrics.identity(identity, scope.outcomes());
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

    /** After the filter decided: the event written if the proxy answers, or followed to the server's reply. */
    static RequestDecision after(Request request, RequestDecision d, AuditLog log, ProxyMetrics metrics) {
        AuditEvent e = request.audit();
        if (e == null || log == null) {
            return d;
        }
        if (d instanceof RequestDecision.Refuse r && r.reply() instanceof OpMsg m) {
            metrics.audit(log.write(outcome(e, m.body())));
        } else if (d instanceof RequestDecision.Answer a && a.reply() instanceof OpMsg m) {
            metrics.audit(log.write(outcome(e, m.body())));
        } else if (d instanceof RequestDecision.Close) {
            metrics.audit(log.write(e.code(-1)));
        } else if (d instanceof RequestDecision.Pass || d instanceof RequestDecision.Replace) {
            request.expectReply(e);
        }
        return d;
    }

    /** The server's reply (after the reads' decryption and masks): the outcome, then the line. */
    static void onReply(Reply reply, AuditEvent e, AuditLog log, ProxyMetrics metrics) {
        if (reply.opCode() == OpCode.OP_MSG) {
            metrics.audit(log.write(outcome(e, reply.msg().bodyBytes())));
        }
    }

    private static final byte[] OK = "ok".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CODE = "code".getBytes(StandardCharsets.UTF_8);
    private static final byte[] N = "n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CURSOR = "cursor".getBytes(StandardCharsets.UTF_8);
    private static final byte[] FIRST_BATCH = "firstBatch".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_BATCH = "nextBatch".getBytes(StandardCharsets.UTF_8);
    private static final byte[] VALUE = "value".getBytes(StandardCharsets.UTF_8);
    private static final byte[] WRITE_ERRORS = "writeErrors".getBytes(StandardCharsets.UTF_8);

    /** As {@link #outcome(AuditEvent, BsonDocument)}, read in place from a reply's bytes (nothing decoded). */
    private static AuditEvent outcome(AuditEvent e, byte[] b) {
        BsonCursor c = new BsonCursor(b, 0, b.length);
        double ok = 0;
        int code = -1;
        int writeError = 0;
        long docs = -1;
        while (c.next()) {
            if (c.nameIs(OK)) {
                ok = c.numberValue();
            } else if (c.nameIs(CODE)) {
                code = (int) c.numberValue();
            } else if (c.nameIs(N) && !Double.isNaN(c.numberValue()) && docs < 0) {
                docs = (long) c.numberValue();
            } else if (c.nameIs(VALUE)) {
                docs = c.type == BsonCursor.NULL ? 0 : 1;
            } else if (c.nameIs(CURSOR) && c.type == BsonCursor.DOCUMENT) {
                BsonCursor inner = new BsonCursor(b, c.valueStart, c.valueEnd);
                while (inner.next()) {
                    if (inner.type == BsonCursor.ARRAY && (inner.nameIs(FIRST_BATCH) || inner.nameIs(NEXT_BATCH))) {
                        docs = count(b, inner);
                    }
                }
            } else if (c.nameIs(WRITE_ERRORS) && c.type == BsonCursor.ARRAY && writeError == 0) {
                BsonCursor first = new BsonCursor(b, c.valueStart, c.valueEnd);
                if (first.next() && first.type == BsonCursor.DOCUMENT) {
                    BsonCursor err = new BsonCursor(b, first.valueStart, first.valueEnd);
                    writeError = err.find(CODE) ? (int) err.numberValue() : -1;
                }
            }
        }
        e.code(ok == 1.0 ? writeError : code);
        if (ok == 1.0 && docs >= 0) {
            e.documents(docs);
        }
        return e;
    }

    private static long count(byte[] b, BsonCursor array) {
        BsonCursor e = new BsonCursor(b, array.valueStart, array.valueEnd);
        long n = 0;
        while (e.next()) {
            n++;
        }
        return n;
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
