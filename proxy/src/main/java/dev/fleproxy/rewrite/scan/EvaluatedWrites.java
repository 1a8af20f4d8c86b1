package dev.fleproxy.rewrite.scan;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.query.UpsertEqualities;
import dev.fleproxy.rewrite.read.FieldMasks;
import dev.fleproxy.rewrite.read.FilterSplit;
import dev.fleproxy.rewrite.write.MessageDocuments;
import dev.fleproxy.rewrite.write.WriteCommands;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.OpMsg;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * update and delete whose filter the server cannot evaluate on envelopes, or an update that
 * computes on an encrypted field ($inc, $mul, $min, $max): carried out by the proxy as reads and
 * compare-and-swap writes on the client's own connection ({@link EvaluatedWrite};
 * docs/query-model.md, "Writes evaluated by the proxy"). What it cannot carry out exactly as the
 * server would is refused as before: arrayFilters, a statement's sort, a collation, let. A
 * statement's hint goes with its candidates' read. An upsert that matches nothing is sent to the
 * server as an upsert built from its filter's equalities ({@link UpsertSeed}). A retryable write's
 * steps carry its txnNumber and stmtIds ({@link RetryableWrite}); inside a transaction, every step
 * runs in it ({@link TransactionOpening}).
 */
public final class EvaluatedWrites {
    /** Fields of the client's command that every read the proxy sends for it carries. */
    private static final Set<String> READ_FIELDS = Set.of("$db", "lsid", "$clusterTime", "$readPreference");
    /**
     * …and, inside a transaction, every step (txnNumber outside one: {@link RetryableWrite}); the
     * fields that open one go on the first step alone ({@link TransactionOpening}).
     */
    private static final Set<String> TRANSACTION_FIELDS = Set.of("txnNumber", "autocommit");
    /**
     * …and the writes it sends, in addition. (txnNumber is not: only the writes that apply a
     * client's statement carry it, with that statement's stmtId: {@link RetryableWrite}.)
     */
    private static final Set<String> WRITE_FIELDS = Set.of("writeConcern", "bypassDocumentValidation", "comment");
    /**
     * Statement fields the proxy carries out (a hint goes with the candidates' read); any other
     * (arrayFilters, sort, collation) is refused.
     */
    private static final Set<String> UPDATE_FIELDS = Set.of("q", "u", "multi", "upsert", "hint");
    private static final Set<String> DELETE_FIELDS = Set.of("q", "limit", "hint");

    private EvaluatedWrites() {
    }

    /** True for the commands the proxy can carry out itself when the server cannot evaluate them. */
    public static boolean evaluates(CommandSpec spec) {
        return spec.rewriter() == CommandSpec.Rewriter.UPDATE || spec.rewriter() == CommandSpec.Rewriter.DELETE
                || spec.rewriter() == CommandSpec.Rewriter.FIND_AND_MODIFY;
    }

    /** The arguments of this command the proxy reads on plaintext when it carries it out (not examined for the server). */
    public static Set<String> readByProxy(CommandSpec spec) {
        return spec.rewriter() == CommandSpec.Rewriter.FIND_AND_MODIFY ? FindAndModifyPlan.READ_BY_PROXY : Set.of();
    }

    /**
     * True for a refusal the proxy may address by carrying the write out: one about an encrypted
     * field (9720010: a condition or an operator on it), never a malformed or unknown command.
     */
    public static boolean addresses(Refusal serverCannot) {
        return serverCannot.error() == dev.fleproxy.protocol.ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD;
    }

    /** The next step of a write the proxy is carrying out for this request, or null if it is not one. */
    public static RequestDecision resume(Request request, CollectionKeys keys, Duration kmsWait) {
        return request.attachment() instanceof WriteInSteps w ? w.step(request, keys, kmsWait) : null;
    }

    /**
     * Starts carrying out the command (its arguments examined already): its first step. What the
     * proxy cannot carry out is refused with {@code serverCannot} (it names fields and operators,
     * never a constant).
     */
    public static RequestDecision start(Request request, CommandSpec spec, CollectionContext ctx, CollectionKeys keys,
                                        Duration kmsWait, Refusal serverCannot, FieldMasks masks) {
        boolean update = spec.rewriter() == CommandSpec.Rewriter.UPDATE;
        OpMsg msg = request.msg().toOpMsg();
        BsonDocument body = msg.body();
        if (body.containsKey("let")) {
            throw new Refusal(serverCannot.error(), serverCannot.getMessage() + "; the proxy carries out such a write "
                    + "itself, but not with let");
        }
        if (spec.rewriter() == CommandSpec.Rewriter.FIND_AND_MODIFY) {
            WriteInSteps w = FindAndModifyPlan.of(body, ctx, spec, serverCannot, commonFields(body, READ_FIELDS),
                    commonFields(body, WRITE_FIELDS), u -> encrypted(u, ctx, spec, body), masks);
            request.attach(w);
            return w.step(request, keys, kmsWait);
        }
        String arg = update ? "updates" : "deletes";
        if (!allDocuments(msg, arg)) {
            throw serverCannot; // malformed: refused as the server path refused it
        }
        List<BatchStatement> statements = plan(MessageDocuments.of(msg, arg), update, ctx, spec, body, serverCannot);
        BsonDocument read = new BsonDocument();
        BsonDocument write = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : body.entrySet()) {
            if (READ_FIELDS.contains(e.getKey()) || inTransaction(body) && TRANSACTION_FIELDS.contains(e.getKey())) {
                read.put(e.getKey(), e.getValue());
                write.put(e.getKey(), e.getValue());
            } else if (WRITE_FIELDS.contains(e.getKey())) {
                write.put(e.getKey(), e.getValue());
            }
        }
        boolean ordered = !body.containsKey("ordered") || body.get("ordered").isBoolean() && body.getBoolean("ordered").getValue();
        RetryableWrite retry = RetryableWrite.of(body);
        if (retry.retryable() && statements.stream().anyMatch(s -> !s.byServer() && s.proxied().multi())) {
            // each statement is recorded as one write; mongod refuses these too
            throw Refusal.command(ctx.ns(), "a retryable write (txnNumber) with a statement of multi: true or limit: 0 "
                    + "(Cannot use (or request) retryable writes with multi=true)");
        }
        EvaluatedWrite w = new EvaluatedWrite(update, ctx, statements, read, write, ordered,
                u -> encrypted(u, ctx, spec, body), retry, TransactionOpening.of(body));
        request.attach(w);
        return w.step(request, keys, kmsWait);
    }

    /**
     * Who carries out each statement, before anything is read or written. A statement the server
     * path accepts is the server's, as the server path rewrote it; one it refuses for an encrypted
     * field (9720010) is the proxy's, if the proxy can carry it out exactly, else the command is
     * refused whole; any other refusal refuses the command. A command with no statement for the
     * proxy was refused by the server path for another reason: that refusal stands. In a command
     * the proxy carries out, an update of the server's that $sets an encrypted field or replaces
     * the document by one holding some is the proxy's too, where it can take it: the server would count the document
     * modified for a value sealed again, the proxy compares plaintext ({@link NoOpWrites}), so the
     * command's nModified is the one plaintext would give. (Should its candidates be over the scan
     * budget, the server runs it after all.)
     */
    private static List<BatchStatement> plan(List<BsonDocument> documents, boolean update, CollectionContext ctx,
                                             CommandSpec spec, BsonDocument body, Refusal serverCannot) {
        String arg = update ? "updates" : "deletes";
        List<BatchStatement> out = new ArrayList<>(documents.size());
        boolean anyByProxy = false;
        for (BsonDocument st : documents) {
            Arguments.examineFields(st, spec.arg(arg), ctx);
            BsonDocument forServer;
            try {
                forServer = forServer(st, update, ctx, spec, body);
            } catch (Refusal statementCannot) {
                if (!addresses(statementCannot)) {
                    throw statementCannot;
                }
                WriteStatement statement = statement(st, update, ctx, statementCannot);
                check(statement, ctx, spec, body, statementCannot);
                out.add(BatchStatement.byProxy(statement));
                anyByProxy = true;
                continue;
            }
            out.add(BatchStatement.byServer(forServer));
        }
        if (!anyByProxy) {
            throw serverCannot;
        }
        for (int i = 0; i < out.size(); i++) {
            BsonDocument st = documents.get(i);
            if (update && out.get(i).byServer() && rewritesSealed(st.get("u"), ctx)) {
                try {
                    WriteStatement taken = statement(st, true, ctx, serverCannot);
                    check(taken, ctx, spec, body, null);
                    out.set(i, BatchStatement.taken(taken, out.get(i).forServer()));
                } catch (Refusal | NotEvaluable notExactly) {
                    // the proxy would not carry it out as the server runs it: the server's it stays
                }
            }
        }
        return out;
    }

    /** True for an update that $sets an encrypted field (or a sub-document holding some), or a replacement holding one. */
    private static boolean rewritesSealed(BsonValue u, CollectionContext ctx) {
        if (u == null || !u.isDocument() || u.asDocument().isEmpty()) {
            return false;
        }
        if (u.asDocument().getFirstKey().startsWith("$")) {
            return !WriteStatement.sealedSets(u, ctx).isEmpty();
        }
        return u.asDocument().keySet().stream()
                .anyMatch(field -> !field.equals("_id") && ctx.paths.classify(field).kind() != PathKind.NONE);
    }

    /** One statement as the server path rewrites it (filter, update, arrayFilters), or its refusal. */
    private static BsonDocument forServer(BsonDocument st, boolean update, CollectionContext ctx, CommandSpec spec,
                                          BsonDocument original) {
        String arg = update ? "updates" : "deletes";
        BsonDocument one = new BsonDocument(update ? "update" : "delete", new BsonString(ctx.policy.collection()))
                .append(arg, new BsonArray(List.of(st))).append("$db", original.get("$db"));
        OpMsg out = update ? WriteCommands.update(new OpMsg(0, one), ctx, spec.arg(arg))
                : WriteCommands.delete(new OpMsg(0, one), ctx, spec.arg(arg));
        return MessageDocuments.of(out, arg).get(0);
    }

    /** The command's fields among these, in its order (reads get the read set; writes the read and write sets). */
    private static BsonDocument commonFields(BsonDocument body, Set<String> names) {
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : body.entrySet()) {
            if (READ_FIELDS.contains(e.getKey()) || names.contains(e.getKey())
                    || inTransaction(body) && TRANSACTION_FIELDS.contains(e.getKey())) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    /** True for a command inside a transaction (autocommit: false): the proxy's steps run in it too. */
    private static boolean inTransaction(BsonDocument body) {
        return body.containsKey("autocommit");
    }

    /** True if the command has statements and every one is a document (body array and sequences alike). */
    private static boolean allDocuments(OpMsg msg, String arg) {
        BsonValue inBody = msg.body().get(arg);
        if (inBody != null && (!inBody.isArray() || !inBody.asArray().stream().allMatch(BsonValue::isDocument))) {
            return false;
        }
        return !MessageDocuments.of(msg, arg).isEmpty();
    }

    static WriteStatement statement(BsonDocument st, boolean update, CollectionContext ctx, Refusal serverCannot) {
        for (String field : st.keySet()) {
            if (!(update ? UPDATE_FIELDS : DELETE_FIELDS).contains(field)
                    || field.equals("upsert") && !st.get("upsert").isBoolean()) {
                throw new Refusal(serverCannot.error(), serverCannot.getMessage() + "; the proxy carries out such a "
                        + "write itself, but not with '" + field + "' in a statement");
            }
        }
        BsonValue q = st.get("q");
        if (q == null || !q.isDocument()) {
            throw Refusal.command(ctx.ns(), "a statement whose q is not a document");
        }
        FilterSplit split;
        try {
            split = FilterSplit.of(q.asDocument(), ctx);
        } catch (NotEvaluable e) {
            throw serverCannot;
        }
        if (!update) {
            BsonValue limit = st.get("limit");
            return new WriteStatement(split, limit == null || limit.isNumber() && limit.asNumber().intValue() == 0,
                    null, Map.of(), st.get("hint"));
        }
        boolean multi = st.containsKey("multi") && st.get("multi").isBoolean() && st.getBoolean("multi").getValue();
        BsonValue u = st.get("u");
        if (u == null || !u.isDocument()) {
            throw serverCannot; // a pipeline update: the server path's refusal stands
        }
        boolean upsert = st.containsKey("upsert") && st.getBoolean("upsert").getValue();
        return new WriteStatement(split, multi, u.asDocument(), WriteStatement.computed(u, ctx),
                upsert ? UpsertEqualities.of(q.asDocument(), ctx.ns()) : null, WriteStatement.sealedSets(u, ctx),
                st.get("hint"));
    }

    /**
     * Refuses, before anything is read or written, what the proxy would add nothing to (the
     * server path refused the statement for another reason than its filter or its arithmetic;
     * {@code serverCannot} null for a statement the server path accepted), and an update whose
     * other operators the server path refuses (tried on an empty document).
     */
    static void check(WriteStatement st, CollectionContext ctx, CommandSpec spec, BsonDocument body,
                              Refusal serverCannot) {
        if (serverCannot != null && st.residual() == null && st.computed().isEmpty()) {
            throw serverCannot;
        }
        if (st.update() != null) {
            try {
                BsonDocument seed = st.upsert() == null ? new BsonDocument() : UpsertSeed.document(st.upsert());
                encrypted(st.updateFor(seed), ctx, spec, body);
                if (st.upsert() != null) {
                    encrypted(new BsonDocument("$set", st.upsert()), ctx, spec, body); // its equalities, as stored
                }
            } catch (dev.fleproxy.rewrite.evaluate.UpdateArithmetic.Failure perDocument) {
                // a type the server would refuse per document (a non-numeric $inc): answered as it would
            }
        }
    }

    /** The update with the policy's fields encrypted, as the server path encrypts it (refusing the same). */
    private static BsonDocument encrypted(BsonDocument u, CollectionContext ctx, CommandSpec spec, BsonDocument original) {
        BsonDocument one = new BsonDocument("update", new BsonString(ctx.policy.collection()))
                .append("updates", new BsonArray(List.of(new BsonDocument("q", new BsonDocument()).append("u", u))))
                .append("$db", original.get("$db"));
        // update's own entry: a findAndModify's update is encrypted as an update statement's
        OpMsg out = WriteCommands.update(new OpMsg(0, one), ctx, dev.fleproxy.protocol.CommandTable.get("update").arg("updates"));
        return MessageDocuments.of(out, "updates").get(0).getDocument("u");
    }
}
