package dev.fleproxy.rewrite;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.ErrorReplies;
import dev.fleproxy.server.HelloRewriter;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.ProxyError;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.WireMessage;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Encrypts what is written to, and decrypts what is read from, the collections of the policy
 * (DESIGN.md §5). Requests to other collections pass untouched after a look at their body's
 * {@code $db} and collection name, and, for the few commands that can name another collection
 * (aggregate, views, renames, mapReduce output, applyOps), at those ({@link CrossReferences}).
 * For an encrypted collection every command is either rewritten correctly, passed because it
 * does not touch field values, or refused with a MongoDB error reply: nothing of a policy field
 * is ever forwarded in plaintext.
 */
public final class EncryptionFilter implements MessageFilter {
    /** Commands on an encrypted collection that neither carry nor return field values. */
    private static final Set<String> HARMLESS = Set.of("drop", "listIndexes", "dropIndexes",
            "collStats", "validate", "killCursors", "dataSize", "compact", "reIndex", "storageStats",
            "listSearchIndexes", "createSearchIndexes");
    /** Commands that read or write values in ways the proxy cannot rewrite. */
    private static final Set<String> UNSUPPORTED = Set.of("explain", "mapReduce", "mapreduce", "geoNear", "group",
            "eval", "parallelCollectionScan", "planCacheListFilters", "planCacheSetFilter");
    /** Handshake and authentication commands: never about collections. */
    private static final Set<String> CONNECTION_COMMANDS = Set.of("saslStart", "saslContinue", "authenticate",
            "getnonce", "logout", "ping", "buildInfo", "buildinfo", "endSessions", "startSession");

    private final Supplier<Policy> policy;
    private final Keyring keyring;

    /** What the reply to a request needs: decryption under this namespace. */
    private record ReplyPlan(String ns, boolean distinct) {
    }

    public EncryptionFilter(Supplier<Policy> policy, Keyring keyring) {
        this.policy = policy;
        this.keyring = keyring;
    }

    @Override
    public RequestDecision onRequest(Request request) {
        Policy p = policy.get();
        if (p.isEmpty()) {
            return RequestDecision.PASS;
        }
        Frame frame = request.frame();
        try {
            return switch (frame.opCode()) {
                case OpCode.OP_MSG -> opMsg(request, p);
                case OpCode.OP_QUERY -> legacyQuery(frame, p);
                case 2001, 2002, 2005, 2006 -> RequestDecision.close("legacy opcode " + OpCode.name(frame.opCode())
                        + " is not supported while collections are encrypted (drivers since MongoDB 3.6 use OP_MSG)");
                default -> RequestDecision.PASS;
            };
        } catch (Refusal r) {
            return RequestDecision.refuse(ErrorReplies.replyTo(frame, r.error(), r.getMessage()));
        }
    }

    private RequestDecision legacyQuery(Frame frame, Policy p) {
        OpQuery q = OpQuery.parse(frame);
        if (q.isCommand() && !q.command().isEmpty()) {
            String name = q.command().getFirstKey();
            if (HelloRewriter.HELLO_COMMANDS.contains(name) || CONNECTION_COMMANDS.contains(name)) {
                return RequestDecision.PASS;
            }
        }
        if (p.coversDatabase(q.database())) {
            throw Refusal.command(q.fullCollectionName(), "legacy OP_QUERY is not supported on a database with "
                    + "encrypted collections; use a driver that speaks OP_MSG (MongoDB 3.6+)");
        }
        if (q.isCommand() && !q.command().isEmpty()) {
            // servers before 5.1 still run commands sent this way, $merge into another database included
            BsonDocument c = q.command();
            BsonValue target = c.get(c.getFirstKey());
            CrossReferences.check(c.getFirstKey(), c, p, q.database(), target.isString() ? target.asString().getValue() : null);
        }
        return RequestDecision.PASS;
    }

    private RequestDecision opMsg(Request request, Policy p) {
        String cmd = request.commandName();
        if (cmd == null || cmd.isEmpty() || HelloRewriter.HELLO_COMMANDS.contains(cmd) || CONNECTION_COMMANDS.contains(cmd)) {
            return RequestDecision.PASS;
        }
        Frame frame = request.frame();
        BsonDocument body = OpMsg.peekBody(frame);
        if (!body.isString("$db")) {
            return RequestDecision.PASS; // the server will reject it
        }
        String db = body.getString("$db").getValue();
        if (cmd.equals("bulkWrite")) {
            return bulkWrite(request, p);
        }
        BsonValue target = body.get(cmd);
        String coll = target != null && target.isString() ? target.asString().getValue() : null;
        if (cmd.equals("getMore")) {
            coll = body.isString("collection") ? body.getString("collection").getValue() : null;
        }
        CollectionPolicy cp = coll == null ? null : p.get(db, coll);
        if (cp == null) {
            // Not an encrypted collection, but maybe a way into one, from any database.
            CrossReferences.check(cmd, body, p, db, coll);
            return RequestDecision.PASS;
        }
        CollectionContext ctx = new CollectionContext(cp, keyring);
        if (HARMLESS.contains(cmd)) {
            return RequestDecision.PASS;
        }
        if (UNSUPPORTED.contains(cmd)) {
            throw Refusal.command(ctx.ns(), cmd + " is not supported on an encrypted collection");
        }
        OpMsg msg = OpMsg.parse(frame);
        return switch (cmd) {
            case "insert" -> replace(msg, insert(msg, ctx));
            case "update" -> replace(msg, statements(msg, "updates", ctx, this::updateStatement));
            case "delete" -> replace(msg, statements(msg, "deletes", ctx, this::deleteStatement));
            case "find" -> expect(request, ctx, false, replace(msg, find(msg, ctx)));
            case "count" -> replace(msg, withFilter(msg, "query", ctx));
            case "distinct" -> expect(request, ctx, true, replace(msg, distinct(msg, ctx)));
            case "findAndModify", "findandmodify" -> expect(request, ctx, false, replace(msg, findAndModify(msg, ctx)));
            case "aggregate" -> expect(request, ctx, false, replace(msg, aggregate(msg, ctx, p, db)));
            case "getMore" -> expect(request, ctx, false, RequestDecision.PASS);
            case "createIndexes" -> {
                CollectionDefinitions.createIndexes(body, ctx);
                yield RequestDecision.PASS;
            }
            case "create", "collMod" -> {
                CollectionDefinitions.collectionOptions(cmd, body, ctx);
                yield RequestDecision.PASS;
            }
            default -> throw Refusal.command(ctx.ns(), "the command " + cmd + " is not supported on an encrypted "
                    + "collection (when the proxy cannot tell what a command does with field values, it refuses it)");
        };
    }

    private static RequestDecision replace(OpMsg original, OpMsg rewritten) {
        return rewritten == original ? RequestDecision.PASS : RequestDecision.replace(rewritten);
    }

    private static RequestDecision expect(Request request, CollectionContext ctx, boolean distinct, RequestDecision d) {
        request.expectReply(new ReplyPlan(ctx.ns(), distinct));
        return d;
    }

    // ---- requests ------------------------------------------------------------------------------

    private OpMsg insert(OpMsg msg, CollectionContext ctx) {
        return mapDocuments(msg, "documents", ctx.ns(), d -> checkSize(DocumentEncryptor.encryptDocument(d, ctx), ctx));
    }

    private interface StatementRewriter {
        BsonDocument rewrite(BsonDocument statement, CollectionContext ctx);
    }

    private OpMsg statements(OpMsg msg, String field, CollectionContext ctx, StatementRewriter r) {
        return mapDocuments(msg, field, ctx.ns(), d -> r.rewrite(d, ctx));
    }

    private BsonDocument updateStatement(BsonDocument st, CollectionContext ctx) {
        ArrayFilters.check(st.get("arrayFilters"), st.get("u"), ctx);
        checkSort(st.get("sort"), ctx); // MongoDB 8.0: which document updateOne picks
        BsonDocument out = rewriteUpdate(rewriteFilter(st, "q", ctx), "u", ctx);
        if (st.containsKey("c")) {
            Expressions.refuseReferences(st.get("c"), ctx, "update constants");
        }
        return out;
    }

    private BsonDocument deleteStatement(BsonDocument st, CollectionContext ctx) {
        return rewriteFilter(st, "q", ctx);
    }

    private OpMsg withFilter(OpMsg msg, String field, CollectionContext ctx) {
        BsonDocument body = msg.body();
        BsonDocument out = rewriteFilter(body, field, ctx);
        return out == body ? msg : msg.withBody(out);
    }

    /*
     * The two helpers below compare what the rewriter returns with the very object they gave it:
     * the documents of a parsed message are raw, and a raw document's get() decodes a new object
     * on each call, so comparing with a second get() would rebuild every statement and nothing
     * would pass byte for byte.
     */

    /** holder with its query filter {@code field} rewritten; holder itself if nothing changed. */
    private static BsonDocument rewriteFilter(BsonDocument holder, String field, CollectionContext ctx) {
        BsonValue f = holder.get(field);
        if (f == null) {
            return holder;
        }
        if (!f.isDocument()) {
            throw Refusal.command(ctx.ns(), "a " + field + " that is not a document");
        }
        BsonDocument nf = FilterRewriter.rewrite(f.asDocument(), ctx);
        return nf == f ? holder : with(holder, field, nf);
    }

    /** holder with its update {@code field} (operators, replacement or pipeline) rewritten and size-checked. */
    private static BsonDocument rewriteUpdate(BsonDocument holder, String field, CollectionContext ctx) {
        BsonValue u = holder.get(field);
        if (u == null) {
            return holder;
        }
        BsonValue nu = UpdateRewriter.rewrite(u, ctx);
        return nu == u ? holder : with(holder, field, nu.isDocument() ? checkSize(nu.asDocument(), ctx) : nu);
    }

    private OpMsg find(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        checkSort(body.get("sort"), ctx);
        checkProjection(body.get("projection"), ctx);
        for (String bound : new String[] {"min", "max"}) {
            checkSort(body.get(bound), ctx);
        }
        if (body.containsKey("let")) {
            Expressions.refuseReferences(body.get("let"), ctx, "let");
        }
        return withFilter(msg, "filter", ctx);
    }

    private OpMsg distinct(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        if (body.isString("key")) {
            EncryptedPaths.Match m = ctx.paths.classify(body.getString("key").getValue());
            if (m.kind() == EncryptedPaths.Kind.INSIDE) {
                throw Refusal.onField(ctx.ns(), m.rule().path(), "distinct of '" + body.getString("key").getValue()
                        + "' (inside the encrypted value)");
            }
        }
        return withFilter(msg, "query", ctx);
    }

    private OpMsg findAndModify(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        checkSort(body.get("sort"), ctx);
        checkProjection(body.get("fields"), ctx);
        ArrayFilters.check(body.get("arrayFilters"), body.get("update"), ctx);
        BsonDocument out = rewriteUpdate(rewriteFilter(body, "query", ctx), "update", ctx);
        return out == body ? msg : msg.withBody(out);
    }

    private OpMsg aggregate(OpMsg msg, CollectionContext ctx, Policy p, String db) {
        BsonDocument body = msg.body();
        if (!body.isArray("pipeline")) {
            throw Refusal.command(ctx.ns(), "aggregate without a pipeline array");
        }
        if (body.containsKey("let")) {
            Expressions.refuseReferences(body.get("let"), ctx, "let");
        }
        BsonArray pipe = body.getArray("pipeline");
        BsonArray np = PipelineAnalyzer.rewriteAggregate(pipe, ctx, p, db);
        return np == pipe ? msg : msg.withBody(with(body, "pipeline", np));
    }

    /** MongoDB 8.0's bulkWrite: operations on any namespaces, listed in nsInfo. */
    private RequestDecision bulkWrite(Request request, Policy p) {
        OpMsg msg = OpMsg.parse(request.frame());
        List<BsonDocument> nsInfo = documents(msg, "nsInfo");
        List<CollectionContext> contexts = new ArrayList<>(nsInfo.size());
        boolean any = false;
        for (BsonDocument info : nsInfo) {
            CollectionPolicy cp = info.isString("ns") ? p.get(info.getString("ns").getValue()) : null;
            contexts.add(cp == null ? null : new CollectionContext(cp, keyring));
            any |= cp != null;
        }
        if (!any) {
            return RequestDecision.PASS;
        }
        List<String> encrypted = encryptedNamespaces(nsInfo, p);
        OpMsg out = mapDocuments(msg, "ops", encrypted.get(0), op -> bulkOp(op, contexts, encrypted.get(0)));
        // Its cursor holds per-operation results, not documents; a duplicate-key error's keyValue
        // may still hold an envelope, which the client gets back as the value it wrote.
        request.expectReply(new ReplyPlan(String.join(",", encrypted), false));
        return replace(msg, out);
    }

    private static List<String> encryptedNamespaces(List<BsonDocument> nsInfo, Policy p) {
        List<String> out = new ArrayList<>();
        for (BsonDocument info : nsInfo) {
            if (info.isString("ns") && p.get(info.getString("ns").getValue()) != null) {
                out.add(info.getString("ns").getValue());
            }
        }
        return out;
    }

    private BsonDocument bulkOp(BsonDocument op, List<CollectionContext> contexts, String named) {
        if (op.isEmpty() || !op.get(op.getFirstKey()).isNumber()) {
            // which namespace it writes is unknown: refuse rather than forward a write unexamined
            throw Refusal.command(named, "a bulkWrite operation that does not start with insert, update or delete "
                    + "and a namespace index");
        }
        String kind = op.getFirstKey();
        int index = op.get(kind).asNumber().intValue();
        CollectionContext ctx = index >= 0 && index < contexts.size() ? contexts.get(index) : null;
        if (ctx == null) {
            return op;
        }
        BsonDocument out = op;
        switch (kind) {
            case "insert" -> {
                if (op.isDocument("document")) {
                    out = with(out, "document", checkSize(DocumentEncryptor.encryptDocument(op.getDocument("document"), ctx), ctx));
                }
            }
            case "update", "delete" -> {
                ArrayFilters.check(op.get("arrayFilters"), op.get("updateMods"), ctx);
                out = rewriteUpdate(rewriteFilter(out, "filter", ctx), "updateMods", ctx);
                if (op.containsKey("sort")) {
                    checkSort(op.get("sort"), ctx);
                }
            }
            default -> throw Refusal.command(ctx.ns(), "bulkWrite operation " + kind + " is not supported on an "
                    + "encrypted collection");
        }
        return out;
    }

    // ---- checks ------------------------------------------------------------------------------

    private static void checkSort(BsonValue sort, CollectionContext ctx) {
        if (sort != null && sort.isDocument()) {
            for (String k : sort.asDocument().keySet()) {
                EncryptedPaths.Match m = ctx.paths.classify(k);
                if (m.kind() != EncryptedPaths.Kind.NONE) {
                    throw Refusal.onField(ctx.ns(), m.rule() != null ? m.rule().path() : k,
                            "sorting or bounding by '" + k + "' (it would order ciphertexts)");
                }
            }
        }
    }

    private static void checkProjection(BsonValue projection, CollectionContext ctx) {
        if (projection == null || !projection.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : projection.asDocument().entrySet()) {
            String k = e.getKey();
            BsonValue v = e.getValue();
            EncryptedPaths.Match m = ctx.paths.classify(k);
            if (m.kind() == EncryptedPaths.Kind.NONE) {
                Expressions.refuseReferences(v, ctx, "the projection");
                continue;
            }
            String field = m.rule() != null ? m.rule().path() : k;
            if (m.kind() == EncryptedPaths.Kind.INSIDE || k.endsWith(".$")) {
                throw Refusal.onField(ctx.ns(), field, "projecting '" + k + "' (inside the encrypted value)");
            }
            if (!(v.isNumber() || v.isBoolean() || Expressions.reference(v) != null)) {
                throw Refusal.onField(ctx.ns(), field, "the projection " + v.toString().replaceAll("\"", "'")
                        .replaceAll("\\s+", " "));
            }
            if (Expressions.reference(v) != null) {
                Expressions.refuseReferences(v, ctx, "the projection");
            }
        }
    }

    private static BsonDocument checkSize(BsonDocument doc, CollectionContext ctx) {
        org.bson.RawBsonDocument raw = dev.fleproxy.wire.BsonBytes.toRaw(doc);
        int size = raw.getByteBuffer().remaining();
        if (size > 16 * 1024 * 1024) {
            throw new Refusal(ProxyError.TOO_LARGE_AFTER_ENCRYPTION, ctx.ns() + ": a document would be " + size
                    + " bytes once encrypted, over MongoDB's 16 MiB document limit");
        }
        return raw;
    }

    // ---- document plumbing -------------------------------------------------------------------

    private interface DocumentMapper {
        BsonDocument map(BsonDocument d);
    }

    /** The documents of a body array or of the kind-1 sequence with this name. */
    private static List<BsonDocument> documents(OpMsg msg, String field) {
        List<BsonDocument> out = new ArrayList<>();
        if (msg.body().isArray(field)) {
            for (BsonValue v : msg.body().getArray(field)) {
                if (v.isDocument()) {
                    out.add(v.asDocument());
                }
            }
        }
        for (DocumentSequence s : msg.sequences()) {
            if (s.identifier().equals(field)) {
                out.addAll(s.documents());
            }
        }
        return out;
    }

    /**
     * Applies the mapper to every document of the body array and of the kind-1 sequence named
     * field; an element that is not a document is refused (naming ns), not passed on unexamined.
     */
    private static OpMsg mapDocuments(OpMsg msg, String field, String ns, DocumentMapper mapper) {
        BsonDocument body = msg.body();
        boolean changed = false;
        if (body.isArray(field)) {
            BsonArray in = body.getArray(field);
            BsonArray out = new BsonArray(in.size());
            for (BsonValue v : in) {
                if (!v.isDocument()) {
                    throw Refusal.command(ns, "an entry of " + field + " that is not a document");
                }
                BsonValue nv = mapper.map(v.asDocument());
                changed |= nv != v;
                out.add(nv);
            }
            if (changed) {
                body = with(body, field, out);
            }
        }
        List<DocumentSequence> sequences = new ArrayList<>(msg.sequences().size());
        for (DocumentSequence s : msg.sequences()) {
            if (!s.identifier().equals(field)) {
                sequences.add(s);
                continue;
            }
            List<BsonDocument> docs = new ArrayList<>(s.documents().size());
            for (BsonDocument d : s.documents()) {
                BsonDocument nd = mapper.map(d);
                changed |= nd != d;
                docs.add(nd);
            }
            sequences.add(new DocumentSequence(s.identifier(), docs));
        }
        return changed ? new OpMsg(msg.flagBits(), body, sequences) : msg;
    }

    private static BsonDocument with(BsonDocument doc, String key, BsonValue value) {
        if (doc.get(key) == value) {
            return doc;
        }
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            out.append(e.getKey(), e.getKey().equals(key) ? value : e.getValue());
        }
        return out;
    }

    // ---- replies -----------------------------------------------------------------------------

    @Override
    public WireMessage onReply(Frame reply, Object state) {
        if (reply.opCode() != OpCode.OP_MSG || !(state instanceof ReplyPlan plan)) {
            return null;
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument body = msg.body();
        BsonValue ok = body.get("ok");
        if (ok == null || !ok.isNumber() || ok.asNumber().doubleValue() != 1.0) {
            return null; // errors carry no documents
        }
        try {
            BsonDocument decrypted = new ReplyDecryptor(keyring, plan.ns()).reply(body);
            if (decrypted == null) {
                return null;
            }
            if (plan.distinct() && decrypted.isArray("values")) {
                decrypted = with(decrypted, "values", dedupe(decrypted.getArray("values")));
            }
            return msg.withBody(decrypted);
        } catch (Refusal r) {
            return new OpMsg(0, ErrorReplies.document(r.error(), r.getMessage()));
        }
    }

    /** distinct over a randomized field returns one envelope per document; after decryption, one per value. */
    private static BsonArray dedupe(BsonArray values) {
        Set<BsonValue> seen = new LinkedHashSet<>(values);
        return new BsonArray(new ArrayList<>(seen));
    }
}
