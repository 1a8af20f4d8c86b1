package dev.fleproxy.rewrite.read;

import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.evaluate.BsonOrder;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.ReplyOutcome;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The replies to reads on encrypted collections: each decrypted as the {@link ReplyPlan} made
 * with its request says ({@link ReplyDecryptor}), and every cursor they open remembered ({@link
 * OpenCursors}), so that a getMore's batch is read with the shape of the query that opened it. A
 * reply whose keys are not in memory waits for them, as a request does.
 */
public final class Replies {
    private static final byte[] GET_MORE = "getMore".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CURSOR = "cursor".getBytes(StandardCharsets.UTF_8);
    private static final byte[] ID = "id".getBytes(StandardCharsets.UTF_8);

    private final KeyResolver resolver;
    private final Envelopes envelopes;
    /** How long a reply may wait for keys not in memory (kmip.kmsWaitMs): its await decisions carry it. */
    private final Duration kmsWait;
    private final ProxyMetrics metrics;
    /** The shape of every cursor opened through this proxy, by id, for the getMores that follow. */
    private final OpenCursors<ReplyPlan> cursors = new OpenCursors<>();
    /** The answers of evaluated queries the proxy holds as its own cursors. */
    private final HeldCursors held;
    /** What evaluated queries may hold, all clients together (maxEvaluationBytes). */
    private final EvaluationMemory memory;
    /** Where large evaluations run, off the event loops. */
    private final EvaluationPool pool;

    /** The collections an evaluated aggregate's $out or $merge writes, sealed by their policies. */
    private final dev.fleproxy.rewrite.paths.CollectionContexts targets;

    /** The policy in force: its identities, for the masks of the fields a connection may not see. */
    private final java.util.function.Supplier<Policy> policy;

    /** @param metrics where replies replaced with errors are counted */
    public Replies(KeyResolver resolver, Envelopes envelopes, Duration kmsWait, ProxyMetrics metrics,
                   java.util.function.Supplier<Policy> policy, EvaluationMemory memory, EvaluationPool pool) {
        this.memory = memory;
        this.pool = pool;
        this.held = new HeldCursors(memory);
        this.policy = policy;
        this.targets = new dev.fleproxy.rewrite.paths.CollectionContexts(policy);
        this.resolver = resolver;
        this.envelopes = envelopes;
        this.kmsWait = kmsWait;
        this.metrics = metrics;
    }

    /**
     * A getMore: its batch has the shape of the query that opened the cursor, and only who opened
     * it may ask for it ({@link CursorOwner}). A cursor the proxy did not see opened (before a
     * restart, or on a direct connection) is refused: its fields could not be placed, so nothing in
     * it would be decrypted correctly.
     */
    public RequestDecision getMore(Request request, CollectionContext ctx) {
        Long id = cursorId(request.msg().bodyBytes(), GET_MORE);
        if (id != null && held.holds(id)) {
            Policy p = policy.get();
            String identity = p.hasAccessRules() ? request.peer().identity(p.identities()) : null;
            return RequestDecision.answer(new OpMsg(0, heldBatch(request.msg().body(), id, ctx.ns(), identity)));
        }
        OpenCursors.Open<ReplyPlan> open = id == null ? null : cursors.get(id);
        if (open == null || open.ns() != null && !open.ns().equals(ctx.ns())) {
            throw Refusal.command(ctx.ns(), "getMore of a cursor this proxy did not open on " + ctx.ns()
                    + " (opened before a restart, or elsewhere); run the query again");
        }
        String refused = open.owner().refuses(CursorOwner.of(request, policy.get()));
        if (refused != null) {
            return RequestDecision.refuse(new OpMsg(0, unauthorized(id, refused)));
        }
        ReplyPlan plan = open.what();
        request.expectReply(new ReplyPlan("getMore", plan.shape(), plan.documents(), false, true, open.owner(), id));
        return RequestDecision.PASS;
    }

    /**
     * A getMore or killCursors on a namespace the policy does not cover: refused if it names a
     * cursor opened on an encrypted collection, whose batches must not leave the proxy undecrypted
     * or reach another identity (a server that does not check the namespace would serve them).
     */
    public RequestDecision otherNamespace(Request request, String ns, boolean getMore) {
        Long id = getMore ? cursorId(request.msg().bodyBytes(), GET_MORE) : null;
        if (id != null && (held.knows(id) || cursors.knows(id))) {
            return RequestDecision.refuse(new OpMsg(0, unauthorized(id, "belongs to another namespace than " + ns)));
        }
        BsonDocument body = getMore ? null : request.msg().body();
        if (body != null && body.isArray("cursors")) {
            for (BsonValue c : body.getArray("cursors")) {
                if ((c.isInt64() || c.isInt32()) && (held.knows(c.asNumber().longValue())
                        || cursors.knows(c.asNumber().longValue()))) {
                    return RequestDecision.refuse(new OpMsg(0, unauthorized(c.asNumber().longValue(),
                            "belongs to another namespace than " + ns)));
                }
            }
        }
        return RequestDecision.PASS;
    }

    /** mongod's answer to a getMore or killCursors of a cursor that is not the caller's (code 13). */
    private static BsonDocument unauthorized(long id, String why) {
        return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString("cursor id " + id + " " + why))
                .append("code", new BsonInt32(13)).append("codeName", new BsonString("Unauthorized"));
    }

    /**
     * The next batch of a cursor the proxy holds, as the server answers a getMore; an unknown
     * cursor's error if it is not held for this namespace and session.
     */
    private BsonDocument heldBatch(BsonDocument getMore, long id, String ns, String identity) {
        BsonValue size = getMore.get("batchSize");
        int batchSize = size != null && size.isNumber() ? size.asNumber().intValue() : 0;
        HeldCursors.Batch b = held.next(id, ns, getMore.get("lsid"), identity, batchSize, EvaluatedReplies.BATCH_BYTES);
        if (b == null) {
            return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString("cursor id " + id
                    + " not found")).append("code", new BsonInt32(43)).append("codeName", new BsonString("CursorNotFound"));
        }
        return EvaluatedReplies.batch("nextBatch", b.documents(), b.cursorId(), ns);
    }

    /**
     * killCursors: refused whole if it names a cursor another identity or session opened (as
     * mongod refuses it); else the cursors its body names are forgotten, and the command answered
     * by the proxy when every one of them is a cursor it holds itself (else passed on, the
     * server's cursors to kill).
     */
    public RequestDecision killCursors(Request request, String ns) {
        BsonDocument body = request.msg().body();
        if (!body.isArray("cursors")) {
            return RequestDecision.PASS;
        }
        CursorOwner caller = CursorOwner.of(request, policy.get());
        for (BsonValue id : body.getArray("cursors")) {
            OpenCursors.Open<ReplyPlan> open = id.isInt64() || id.isInt32() ? cursors.get(id.asNumber().longValue()) : null;
            String refused = open == null ? null : open.ns() != null && !open.ns().equals(ns) ? "belongs to another namespace than " + ns
                    : open.owner().refuses(caller);
            if (refused != null) {
                return RequestDecision.refuse(new OpMsg(0, unauthorized(id.asNumber().longValue(), refused)));
            }
        }
        BsonArray killed = new BsonArray();
        int named = 0;
        String identity = policy.get().hasAccessRules() ? caller.identity() : null;
        for (BsonValue id : body.getArray("cursors")) {
            if (id.isInt64() || id.isInt32()) {
                named++;
                cursors.closed(id.asNumber().longValue());
                if (held.kill(id.asNumber().longValue(), ns, caller.lsid(), identity)) {
                    killed.add(new BsonInt64(id.asNumber().longValue()));
                }
            }
        }
        if (named == 0 || killed.size() < body.getArray("cursors").size()) {
            return RequestDecision.PASS;
        }
        return RequestDecision.answer(new OpMsg(0, new BsonDocument("cursorsKilled", killed)
                .append("cursorsNotFound", new BsonArray()).append("cursorsAlive", new BsonArray())
                .append("cursorsUnknown", new BsonArray()).append("ok", new BsonDouble(1))));
    }

    /** The reply to a request that expected it with a {@link ReplyPlan} (any other state: passed). */
    public ReplyDecision onReply(Reply reply, Object state) {
        if (reply.opCode() == OpCode.OP_MSG && state instanceof EvaluatedQuery q) {
            return evaluated(reply, q);
        }
        if (reply.opCode() != OpCode.OP_MSG || !(state instanceof ReplyPlan plan)) {
            return ReplyDecision.PASS;
        }
        if (plan.cursor()) {
            Long id = replyCursorId(reply.msg().bodyBytes());
            if (id != null && id != 0) {
                cursors.opened(id, plan.shape() == null ? null : plan.shape().policy.namespace(), plan.owner(), plan);
            } else if (id != null && plan.getMoreOf() != 0) {
                cursors.closed(plan.getMoreOf()); // exhausted
            }
        }
        if (plan.documents() == null) {
            return ReplyDecision.PASS;
        }
        CollectionKeys keys = new CollectionKeys(resolver, envelopes, reply.waitedOut(), kmsWait);
        try {
            ReplyDecryptor decryptor = new ReplyDecryptor(keys, plan.shape(), plan.documents(), plan.distinct(),
                    masks(reply, plan.shape().policy, keys));
            Frame decrypted = decryptor.decrypt(reply.msg(), reply.alloc(), keys);
            if (keys.hasPending()) {
                return ReplyDecision.await(keys.fetchPending(), kmsWait);
            }
            if (decrypted == null) {
                return ReplyDecision.PASS;
            }
            // decrypt wrote only an ok reply: what it returned is known, so the audit need not read it again
            return plan.distinct() ? ReplyDecision.replace(distinctValues(decrypted, reply))
                    : ReplyDecision.replace(decrypted, ReplyOutcome.returned(decryptor.returned()));
        } catch (Refusal r) {
            metrics.replyError(plan.command(), r.error().code());
            return ReplyDecision.replace(reply.encode(new OpMsg(0, ErrorReplies.document(r.error(), r.getMessage()))));
        }
    }

    /** What this reply's connection gets instead of the fields of this collection it may not see. */
    private FieldMasks masks(Reply reply, dev.fleproxy.policy.CollectionPolicy cp, CollectionKeys keys) {
        Policy p = policy.get();
        return p.hasAccessRules() ? FieldMasks.of(cp, reply.peer().identity(p.identities()), keys) : FieldMasks.NONE;
    }

    /**
     * One step of a query the proxy evaluates. From its first reply it holds part of the
     * proxy-wide memory, given back when it is answered or refused, or when its connection closes
     * first; until then it waits (for keys, the next batch, or the evaluation pool).
     */
    private ReplyDecision evaluated(Reply reply, EvaluatedQuery q) {
        if (q.lease == null) {
            q.lease = memory.lease();
            reply.peer().whenClosed(q, q::end);
        }
        ReplyDecision d = evaluatedStep(reply, q);
        if (!(d instanceof ReplyDecision.Await) && !(d instanceof ReplyDecision.AwaitUpstream)) {
            q.end();
            reply.peer().forget(q);
        }
        return d;
    }

    private ReplyDecision evaluatedStep(Reply reply, EvaluatedQuery q) {
        CollectionKeys keys = new CollectionKeys(resolver, envelopes, reply.waitedOut(), kmsWait);
        try {
            return EvaluatedReplies.onReply(reply, q, keys, kmsWait, metrics, held, masks(reply, q.shape.policy, keys),
                    pool, targets);
        } catch (Refusal r) {
            EvaluatedReplies.closeServerCursor(reply, q); // a batch it could not decrypt, say
            metrics.replyError(q.command, r.error().code());
            return ReplyDecision.replace(reply.encode(new OpMsg(0, ErrorReplies.document(r.error(), r.getMessage()))));
        } catch (NotEvaluable e) {
            // met while matching or sorting the candidates (before the last batch, as they are matched as they come);
            // its message may quote a value, so it is not repeated
            EvaluatedReplies.closeServerCursor(reply, q);
            metrics.replyError(q.command, ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD.code());
            return ReplyDecision.replace(reply.encode(new OpMsg(0, ErrorReplies.document(
                    ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, q.ns() + ": " + EvaluatedReads.DATA_NOT_EVALUABLE))));
        }
    }

    /**
     * distinct over a randomized field returns one envelope per document; after decryption, one
     * per value (values the server counts as equal, 1 and 1.0, once), in the server's order.
     */
    private static Frame distinctValues(Frame decrypted, Reply reply) {
        BsonDocument body;
        OpMsg msg;
        try {
            msg = OpMsg.parse(decrypted);
            body = msg.body();
        } catch (RuntimeException e) {
            decrypted.release();
            throw e;
        }
        if (!body.isArray("values")) {
            return decrypted;
        }
        BsonArray values = body.getArray("values");
        // the server ordered (and told apart) envelopes; the client expects its values in BSON order
        TreeSet<BsonValue> sorted = new TreeSet<>(BsonOrder.COMPARATOR);
        sorted.addAll(values);
        BsonArray distinct = new BsonArray(new ArrayList<>(sorted));
        Frame out = reply.encode(msg.withBody(CopyOnChange.with(body, "values", distinct, values)));
        decrypted.release();
        return out;
    }

    /** The int64 named so at the top of a document, or null. */
    private static Long cursorId(byte[] doc, byte[] name) {
        BsonCursor c = new BsonCursor(doc, 0, doc.length);
        return c.find(name) ? c.longValue() : null;
    }

    /** The id of the cursor a reply's body describes (0: exhausted), or null if it holds none. */
    private static Long replyCursorId(byte[] body) {
        BsonCursor c = new BsonCursor(body, 0, body.length);
        if (!c.find(CURSOR) || c.type != BsonCursor.DOCUMENT) {
            return null;
        }
        BsonCursor inner = new BsonCursor(body, c.valueStart, c.valueEnd);
        return inner.find(ID) ? inner.longValue() : null;
    }
}
