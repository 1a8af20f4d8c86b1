package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeysPending;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpQuery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Encrypts what is written to, and decrypts what is read from, the collections of the policy
 * (docs/query-model.md). This class decides which command goes where; the work is done by {@link
 * Inserts}, {@link WriteCommands}, {@link ReadCommands}, {@link CollectionDefinitions} and {@link
 * ReplyDecryptor}. Requests to other collections pass untouched after a look at their body's
 * {@code $db} and collection name and, for the commands that can name another collection, at
 * those ({@link CrossReferences}). For an encrypted collection every command is either rewritten
 * correctly, passed because it does not touch field values, or refused with a MongoDB error
 * reply: nothing of a policy field is ever forwarded in plaintext. A command whose keys are not in
 * memory waits for them (an await decision), so no KMS round trip ever happens on an event loop.
 */
public final class EncryptionFilter implements MessageFilter {
    private final Supplier<Policy> policy;
    private final KeyResolver resolver;
    private final Envelopes envelopes = new Envelopes();
    /** How long a message may wait for keys not in memory (kmip.kmsWaitMs): its await decisions carry it. */
    private final Duration kmsWait;
    private final ProxyMetrics metrics;
    /** The encrypted-path trees of the policy in force, built once per policy (a reload makes a new one). */
    private volatile PolicyPaths paths = new PolicyPaths(Policy.EMPTY);

    /**
     * What the reply to a request needs: the shape of the documents it returns (null: nothing to
     * decrypt), for distinct the shape of each value; whether it opens a cursor whose later
     * batches (getMore) have the same shape.
     */
    private record ReplyPlan(ReadShape shape, ReadShape.Node documents, boolean distinct, boolean cursor,
                             long getMoreOf) {
        /** The plan for the reply to this command, shaped as the command table says its reply is. */
        ReplyPlan(ReadShape shape, ReadShape.Node documents, CommandSpec spec) {
            this(shape, documents, spec.rewriter().reply() == CommandSpec.Reply.VALUES,
                    spec.rewriter().reply() == CommandSpec.Reply.CURSOR, 0);
        }
    }

    /** The shape of every cursor opened through this proxy, by id, for the getMores that follow. */
    private final OpenCursors<ReplyPlan> cursors = new OpenCursors<>();

    private record PolicyPaths(Policy policy, Map<CollectionPolicy, EncryptedPaths> byCollection) {
        PolicyPaths(Policy policy) {
            this(policy, new IdentityHashMap<>());
            policy.collections().values().forEach(cp -> byCollection.put(cp, new EncryptedPaths(cp)));
        }
    }

    /** @param kmsWait how long a message may wait for keys (its await decisions carry it; refusals name it) */
    public EncryptionFilter(Supplier<Policy> policy, KeyResolver resolver, Duration kmsWait) {
        this(policy, resolver, kmsWait, ProxyMetrics.DISABLED);
    }

    /** @param metrics where replies replaced with errors are counted */
    public EncryptionFilter(Supplier<Policy> policy, KeyResolver resolver, Duration kmsWait, ProxyMetrics metrics) {
        this.metrics = metrics;
        this.policy = policy;
        this.resolver = resolver;
        this.kmsWait = kmsWait;
    }

    private CollectionContext context(CollectionPolicy cp, CollectionKeys keys) {
        PolicyPaths pp = paths;
        EncryptedPaths ep = pp.byCollection().get(cp);
        if (ep == null) {
            pp = new PolicyPaths(policy.get());
            paths = pp;
            ep = pp.byCollection().get(cp);
            if (ep == null) {
                ep = new EncryptedPaths(cp); // a policy swapped in between: correct, built once more
            }
        }
        return new CollectionContext(cp, ep, keys);
    }

    @Override
    public RequestDecision onRequest(Request request) {
        Policy p = policy.get();
        if (p.isEmpty()) {
            return RequestDecision.PASS;
        }
        CollectionKeys keys = new CollectionKeys(resolver, envelopes, request.waitedOut(), kmsWait);
        try {
            return switch (request.opCode()) {
                case OpCode.OP_MSG -> opMsg(request, p, keys);
                case OpCode.OP_QUERY -> legacyQuery(request.query(), p);
                default -> CommandTable.LEGACY_OPCODES.contains(request.opCode())
                        ? RequestDecision.close("legacy opcode " + OpCode.name(request.opCode()) + " is not supported "
                                + "while collections are encrypted (drivers since MongoDB 3.6 use OP_MSG)")
                        : RequestDecision.PASS;
            };
        } catch (KeysPending pending) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        } catch (Refusal r) {
            return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), r.error(), r.getMessage()));
        }
    }

    private RequestDecision legacyQuery(OpQuery q, Policy p) {
        String cmd = q.isCommand() && !q.command().isEmpty() ? q.command().getFirstKey() : null;
        if (cmd != null && CommandTable.isConnectionLevel(cmd)) {
            return RequestDecision.PASS;
        }
        if (p.coversDatabase(q.database())) {
            throw Refusal.command(q.fullCollectionName(), "legacy OP_QUERY is not supported on a database with "
                    + "encrypted collections; use a driver that speaks OP_MSG (MongoDB 3.6+)");
        }
        if (cmd != null) {
            // servers before 5.1 still run commands sent this way, $merge into another database included
            CommandSpec spec = CommandTable.get(cmd);
            if (spec == null && q.database().equals("admin")) {
                throw unknownCommand(cmd, q.database());
            }
            BsonDocument c = q.command();
            BsonValue target = c.get(cmd);
            CrossReferences.check(cmd, c, p, q.database(), target.isString() ? target.asString().getValue() : null);
        }
        return RequestDecision.PASS;
    }

    /**
     * An OP_MSG command, routed by its entry in the command table: connection-level commands pass;
     * a command on a namespace no policy names passes (its body checked for references to
     * encrypted ones where it can make them); on an encrypted namespace every argument is examined
     * and the command is rewritten, passed or refused as its entry says. A command the table does
     * not know passes only where its target is shown to be plain.
     */
    private RequestDecision opMsg(Request request, Policy p, CollectionKeys keys) {
        String cmd = request.commandName();
        OpMsgView m = request.msg();
        if (cmd.isEmpty() || CommandTable.isConnectionLevel(cmd)) {
            return RequestDecision.PASS;
        }
        BsonCursor.NameProblem names = m.topLevelNameProblem();
        if (names != null) {
            // which command, or which namespace, would the server run? Not forwarded while encrypting.
            throw Refusal.command("(a command)", names.describe() + " at the top of a command; the proxy refuses "
                    + "commands it cannot read as the server would while collections are encrypted");
        }
        String db = m.bodyString("$db");
        if (db == null) {
            return RequestDecision.PASS; // the server will reject it
        }
        if (!m.bodyStringIsUtf8("$db")) {
            throw Refusal.command("(a database)", "a $db that is not valid UTF-8");
        }
        CommandSpec spec = CommandTable.get(cmd);
        if (spec == null) {
            if (db.equals("admin") || p.coversDatabase(db)) {
                throw unknownCommand(cmd, db);
            }
            return RequestDecision.PASS; // a database without encrypted collections
        }
        if (spec.scope() == CommandSpec.Scope.NAMESPACES) {
            return bulkWrite(request, spec, p, keys);
        }
        String targetArg = spec.scope() == CommandSpec.Scope.CURSOR ? "collection" : cmd;
        String name = m.bodyString(targetArg);
        if (name != null && !m.bodyStringIsUtf8(targetArg)) {
            throw Refusal.command(db + ".(?)", "the command " + spec.name() + " on a collection whose name is not "
                    + "valid UTF-8");
        }
        CollectionPolicy cp = name == null ? null : target(spec.scope(), name, db, p);
        if (cp == null) {
            // Not an encrypted collection, but maybe a way into one, from any database.
            if (spec.crossReferences()) {
                CrossReferences.check(spec.name(), m.body(), p, db, name);
            }
            return RequestDecision.PASS;
        }
        request.policyCollection(cp.namespace());
        if (spec.onEncrypted() == CommandSpec.OnEncrypted.REFUSE) {
            throw Refusal.command(cp.namespace(), spec.name() + " is not supported on an encrypted collection");
        }
        CollectionContext ctx = context(cp, keys);
        Arguments.examine(spec, m, ctx);
        refuseBadNames(request, ctx.ns());
        if (spec.onEncrypted() == CommandSpec.OnEncrypted.PASS) {
            return RequestDecision.PASS;
        }
        if (spec.rewriter() == CommandSpec.Rewriter.KILL_CURSORS) {
            forgetCursors(m.body()); // needs no key
            return RequestDecision.PASS;
        }
        if (!keys.need(cp.keyId())) {
            // its reply needs the key as much as its values do: fetch it before anything is forwarded
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        ReadShape stored = ctx.paths.readShape();
        return switch (spec.rewriter()) {
            case INSERT -> {
                Frame out = Inserts.rewrite(m, ctx, request.alloc());
                yield out == null ? RequestDecision.PASS : RequestDecision.replace(out);
            }
            case UPDATE -> rewrite(request, msg -> WriteCommands.update(msg, ctx, spec.arg("updates")));
            case DELETE -> rewrite(request, msg -> WriteCommands.delete(msg, ctx, spec.arg("deletes")));
            case FIND_AND_MODIFY -> expect(request, rewrite(request, msg -> WriteCommands.findAndModify(msg, ctx)),
                    new ReplyPlan(stored, stored.root, spec));
            case FIND -> expect(request, ReadCommands.findTouchesNothingEncrypted(m.bodyBytes(), ctx.paths)
                    ? RequestDecision.PASS : rewrite(request, msg -> ReadCommands.find(msg, ctx)),
                    new ReplyPlan(stored, stored.root, spec));
            case COUNT -> rewrite(request, msg -> ReadCommands.count(msg, ctx));
            case DISTINCT -> {
                RequestDecision d = rewrite(request, msg -> ReadCommands.distinct(msg, ctx));
                String key = m.bodyString("key");
                yield expect(request, d, new ReplyPlan(stored, key == null ? null : stored.distinctValues(key), spec));
            }
            case AGGREGATE -> {
                PipelineSchema schema = new PipelineSchema(ctx);
                RequestDecision d = rewrite(request, msg -> ReadCommands.aggregate(msg, schema, p, db));
                yield expect(request, d, new ReplyPlan(schema.shape, schema.shape.root, spec));
            }
            case GET_MORE -> getMore(request, ctx);
            case CREATE_INDEXES -> {
                CollectionDefinitions.createIndexes(m.body(), ctx, spec.arg("indexes"));
                yield RequestDecision.PASS;
            }
            case COLLECTION_OPTIONS -> {
                CollectionDefinitions.collectionOptions(spec.name(), m.body(), ctx);
                yield RequestDecision.PASS;
            }
            case KILL_CURSORS, BULK_WRITE -> throw new IllegalStateException(spec.name() + " is decided above");
        };
    }

    /**
     * The encrypted collection a command's own element (or getMore's collection) names, or null.
     * A collection command names one of $db; a namespace command "db.coll" (a bare name, which
     * is malformed, read as one of $db); a server or database command names none, but one whose
     * element is the name of an encrypted collection anyway is taken to be about it: its target
     * cannot be shown to be plain.
     */
    private static CollectionPolicy target(CommandSpec.Scope scope, String name, String db, Policy p) {
        boolean dotted = name.indexOf('.') > 0;
        return switch (scope) {
            case COLLECTION, CURSOR -> p.get(db, name);
            case NAMESPACE -> dotted ? p.get(name) : p.get(db, name);
            default -> p.get(db, name) != null ? p.get(db, name) : dotted ? p.get(name) : null;
        };
    }

    private static Refusal unknownCommand(String cmd, String db) {
        return Refusal.command(db, "the command '" + Arguments.quoted(cmd) + "' is not one the proxy knows; "
                + "on a database with encrypted collections (and on admin) it refuses commands it cannot examine");
    }

    /**
     * Runs a rewriter on the message by documents; forwards what it returns, or the request as it
     * is when the rewriter gave back the very message it was given.
     */
    private static RequestDecision rewrite(Request request, UnaryOperator<OpMsg> rewriter) {
        OpMsg original = request.msg().toOpMsg();
        OpMsg rewritten = rewriter.apply(original);
        return rewritten == original ? RequestDecision.PASS : RequestDecision.replace(request.encode(rewritten));
    }

    /**
     * A name given twice in one document (which value would the server keep, and which was
     * encrypted?), or a name that is not UTF-8 (Java reads another name than the server sees).
     */
    private static void refuseBadNames(Request request, String ns) {
        BsonCursor.NameProblem problem = request.msg().nameProblem();
        if (problem != null) {
            throw new Refusal(ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, ns + ": " + problem.describe()
                    + "; on an encrypted collection the proxy does not guess which field the server would use");
        }
    }

    /** A command whose reply holds documents to decrypt: the decision on the request, and the plan for its reply. */
    private static RequestDecision expect(Request request, RequestDecision d, ReplyPlan plan) {
        request.expectReply(plan);
        return d;
    }

    /**
     * A getMore: its batch has the shape of the query that opened the cursor. A cursor the proxy
     * did not see opened (before a restart, or on a direct connection) is refused: its fields
     * could not be placed, so nothing in it would be decrypted correctly.
     */
    private RequestDecision getMore(Request request, CollectionContext ctx) {
        Long id = cursorId(request.msg().bodyBytes(), GET_MORE);
        ReplyPlan plan = id == null ? null : cursors.get(id);
        if (plan == null || plan.shape() != null && !plan.shape().policy.namespace().equals(ctx.ns())) {
            throw Refusal.command(ctx.ns(), "getMore of a cursor this proxy did not open on " + ctx.ns()
                    + " (opened before a restart, or elsewhere); run the query again");
        }
        request.expectReply(new ReplyPlan(plan.shape(), plan.documents(), false, true, id));
        return RequestDecision.PASS;
    }

    private void forgetCursors(BsonDocument body) {
        if (body.isArray("cursors")) {
            for (BsonValue id : body.getArray("cursors")) {
                if (id.isInt64() || id.isInt32()) {
                    cursors.closed(id.asNumber().longValue());
                }
            }
        }
    }

    private static final byte[] GET_MORE = "getMore".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    private static final byte[] CURSOR = "cursor".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    private static final byte[] ID = "id".getBytes(java.nio.charset.StandardCharsets.UTF_8);

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

    /**
     * MongoDB 8.0's bulkWrite: operations on any namespaces, listed in nsInfo. Once one of them is
     * encrypted, its arguments are examined against each encrypted namespace, and every operation
     * and namespace entry on one of them field by field.
     */
    private RequestDecision bulkWrite(Request request, CommandSpec spec, Policy p, CollectionKeys keys) {
        OpMsg msg = request.msg().toOpMsg();
        List<BsonDocument> nsInfo = MessageDocuments.of(msg, "nsInfo");
        List<CollectionContext> contexts = new ArrayList<>(nsInfo.size());
        Map<String, CollectionContext> encrypted = new LinkedHashMap<>();
        for (BsonDocument info : nsInfo) {
            CollectionPolicy cp = info.isString("ns") ? p.get(info.getString("ns").getValue()) : null;
            CollectionContext ctx = cp == null ? null : encrypted.computeIfAbsent(cp.namespace(), ns -> context(cp, keys));
            contexts.add(ctx);
            if (ctx != null) {
                Arguments.examineFields(info, spec.arg("nsInfo"), ctx);
            }
        }
        if (encrypted.isEmpty()) {
            return RequestDecision.PASS;
        }
        String named = encrypted.keySet().iterator().next();
        request.policyCollection(named);
        for (CollectionContext ctx : encrypted.values()) {
            Arguments.examine(spec, request.msg(), ctx);
        }
        refuseBadNames(request, named);
        encrypted.values().forEach(ctx -> keys.need(ctx.policy.keyId()));
        if (keys.hasPending()) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        OpMsg out = WriteCommands.bulkWrite(msg, contexts, named, spec.arg("ops"));
        // Its cursor holds per-operation results, not documents: nothing in its reply is decrypted
        // (a duplicate-key error's keyValue shows the envelope, as stored).
        return out == msg ? RequestDecision.PASS : RequestDecision.replace(request.encode(out));
    }

    // ---- replies -----------------------------------------------------------------------------

    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        if (reply.opCode() != OpCode.OP_MSG || !(state instanceof ReplyPlan plan)) {
            return ReplyDecision.PASS;
        }
        if (plan.cursor()) {
            Long id = replyCursorId(reply.msg().bodyBytes());
            if (id != null && id != 0) {
                cursors.opened(id, plan);
            } else if (id != null && plan.getMoreOf() != 0) {
                cursors.closed(plan.getMoreOf()); // exhausted
            }
        }
        if (plan.documents() == null) {
            return ReplyDecision.PASS;
        }
        CollectionKeys keys = new CollectionKeys(resolver, envelopes, reply.waitedOut(), kmsWait);
        try {
            Frame decrypted = new ReplyDecryptor(keys, plan.shape(), plan.documents(), plan.distinct())
                    .decrypt(reply.msg(), reply.alloc(), keys);
            if (keys.hasPending()) {
                return ReplyDecision.await(keys.fetchPending(), kmsWait);
            }
            if (decrypted == null) {
                return ReplyDecision.PASS;
            }
            return ReplyDecision.replace(plan.distinct() ? distinctValues(decrypted, reply) : decrypted);
        } catch (Refusal r) {
            metrics.replyError(r.error().code());
            return ReplyDecision.replace(reply.encode(new OpMsg(0, ErrorReplies.document(r.error(), r.getMessage()))));
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
        java.util.TreeSet<BsonValue> sorted = new java.util.TreeSet<>(BsonOrder.COMPARATOR);
        sorted.addAll(values);
        BsonArray distinct = new BsonArray(new ArrayList<>(sorted));
        Frame out = reply.encode(msg.withBody(CopyOnChange.with(body, "values", distinct, values)));
        decrypted.release();
        return out;
    }
}
