package dev.fleproxy.rewrite.read;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.BsonOrder;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import dev.fleproxy.rewrite.write.DocumentEncryptor;
import dev.fleproxy.rewrite.write.DuplicateKeys;
import dev.fleproxy.rewrite.write.MessageDocuments;
import dev.fleproxy.rewrite.write.WriteCommands;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.wire.BsonBytes;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Writes the output of an aggregate the proxy evaluated into the target of its $out or $merge
 * ({@link OutputStage}), as the server would, through commands the proxy sends on the client's
 * own upstream connection (its authentication and session), each document sealed by the
 * target's policy with the write path's own code ({@link DocumentEncryptor}, {@link
 * WriteCommands}). $out: the target's indexes listed, a temporary collection {@code
 * tmp.agg_out.<random>} made in the target's database with them, the documents inserted, and the
 * temporary renamed over the target (dropTarget) as one step — or dropped if anything failed,
 * leaving the target as it was. $merge: update statements by the {@code on} fields (upserts for
 * whenNotMatched insert; inserts for whenMatched fail), in batches, stopping at the first error
 * as the server's $merge does. The documents go in the order of their _id (those without one
 * shuffled), never the pipeline's: a $sort on an encrypted field must not show in the order the
 * server receives them. The answer is the server's: an empty cursor, or the error.
 */
final class OutputWrites {
    /** What the evaluation pool hands back when the output documents are ready to be written. */
    static final Object READY = new Object();
    static final Duration CALL_WAIT = Duration.ofMinutes(2);
    private static final int BATCH_DOCUMENTS = 1000;
    /**
     * Sealed bytes per write command (one document may be larger): each batch is sealed on the
     * connection's event loop, so it is no more than the loop evaluates itself ({@link
     * EvaluationPool#ON_LOOP_BYTES}); a large output costs more round trips, never a loop held
     * for the milliseconds 8 MiB of sealing took.
     */
    private static final int BATCH_BYTES = (int) EvaluationPool.ON_LOOP_BYTES;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int NAMESPACE_NOT_FOUND = 26;
    /** mongod's codes for an on field that is an array, or missing or null, and for whenNotMatched: fail. */
    private static final int ON_FIELD_ARRAY = 51185;
    private static final int ON_FIELD_MISSING = 51132;
    private static final int NO_MATCHING_DOCUMENT = 13113;

    private enum Step { LIST_INDEXES, CREATE, INDEXES, WRITE, RENAME, DROP_TEMP, DONE }

    private final OutputStage out;
    /** The target's policy; null if it is outside the policy (then the output carries no encrypted path). */
    private final CollectionPolicy target;
    private final String sourceNs;
    /** What every command sent carries of the client's: lsid, $clusterTime. */
    private final BsonDocument session;
    /** …and every write: writeConcern, bypassDocumentValidation. */
    private final BsonDocument writeOptions;
    private List<BsonDocument> documents;
    private int next;
    private int inBatch;
    private Step step;
    private final String temp = "tmp.agg_out." + java.util.UUID.randomUUID();
    private final BsonArray indexes = new BsonArray();
    private CompletionStage<Frame> call;
    private BsonDocument failure;

    OutputWrites(OutputStage out, CollectionPolicy target, String sourceNs, BsonDocument session,
                 BsonDocument writeOptions) {
        this.out = out;
        this.target = target;
        this.sourceNs = sourceNs;
        this.session = session;
        this.writeOptions = writeOptions;
    }

    /** True once the output is known and being written. */
    boolean started() {
        return documents != null;
    }

    boolean failed() {
        return failure != null;
    }

    /** The pipeline's output, to be written: in the order of _id, those without one shuffled after them. */
    void start(List<BsonDocument> output) {
        List<BsonDocument> withId = new ArrayList<>();
        List<BsonDocument> withoutId = new ArrayList<>();
        for (BsonDocument d : output) {
            (d.containsKey("_id") ? withId : withoutId).add(d);
        }
        withId.sort((a, b) -> BsonOrder.COMPARATOR.compare(a.get("_id"), b.get("_id")));
        Collections.shuffle(withoutId, RANDOM);
        if (out.merge() && out.on().contains("_id")) {
            // as the server: a document without _id gets one, so it matches nothing and is inserted
            List<BsonDocument> named = new ArrayList<>(withoutId.size());
            for (BsonDocument d : withoutId) {
                BsonDocument n = new BsonDocument("_id", new BsonObjectId());
                n.putAll(d);
                named.add(n);
            }
            withoutId = named;
        }
        withId.addAll(withoutId);
        documents = withId;
        step = out.merge() ? Step.WRITE : Step.LIST_INDEXES;
    }

    /** The next step: the answer of the call sent last taken, then the next call, the target's key, or the answer. */
    ReplyDecision step(Reply reply, CollectionKeys keys, CollectionContexts contexts, Duration kmsWait) {
        if (call != null) {
            CompletableFuture<Frame> f = call.toCompletableFuture();
            if (!f.isDone() || f.isCompletedExceptionally()) {
                call = null;
                return answer(reply, ErrorReplies.document(ProxyError.UPSTREAM_UNAVAILABLE, sourceNs + ": the upstream "
                        + (f.isDone() ? "connection closed" : "did not answer within " + CALL_WAIT.toSeconds() + " s")
                        + " while the proxy wrote the output of " + out.name() + " into " + out.namespace()
                        + (out.merge() ? "; some of it may be written" : "; " + temp + " may be left behind")));
            }
            Frame r = f.join();
            BsonDocument body;
            try {
                body = OpMsgView.of(r).body(); // a copy of the body's bytes: safe after release
            } finally {
                r.release();
            }
            call = null;
            took(body);
        }
        if (target != null && step != Step.DONE && !keys.about(target.namespace()).need(target.keyId())) {
            return ReplyDecision.await(keys.fetchPending(), kmsWait);
        }
        BsonDocument command;
        try {
            command = command(target == null ? null : contexts.of(target, keys));
        } catch (Refusal r) {
            fail(ErrorReplies.document(r.error(), r.getMessage())); // the target's key unusable, a document too large
            command = command(null);
        }
        if (command == null) {
            return answer(reply, failure != null ? failure : EvaluatedReplies.batch("firstBatch", List.of(), 0, sourceNs));
        }
        call = reply.calls().command(command);
        return ReplyDecision.awaitUpstream(call, CALL_WAIT);
    }

    /** The reply to the last command: the next step, or the failure to answer with. */
    private void took(BsonDocument body) {
        boolean ok = body.isNumber("ok") && body.getNumber("ok").doubleValue() == 1.0;
        switch (step) {
            case LIST_INDEXES -> {
                if (ok) {
                    for (BsonValue index : body.getDocument("cursor").getArray("firstBatch")) {
                        BsonDocument spec = new BsonDocument();
                        spec.putAll(index.asDocument()); // the reply's documents are raw: immutable
                        if (!spec.isString("name") || !spec.getString("name").getValue().equals("_id_")) {
                            spec.remove("v");
                            spec.remove("ns");
                            indexes.add(spec);
                        }
                    }
                    step = Step.CREATE;
                } else if (body.isNumber("code") && body.getNumber("code").intValue() == NAMESPACE_NOT_FOUND) {
                    step = Step.CREATE; // no target yet: $out creates it
                } else {
                    failure = body;
                    step = Step.DONE;
                }
            }
            case CREATE -> {
                step = ok ? indexes.isEmpty() ? Step.WRITE : Step.INDEXES : Step.DONE;
                failure = ok ? null : body;
            }
            case INDEXES -> {
                if (!ok) {
                    fail(body);
                } else {
                    step = Step.WRITE;
                }
            }
            case WRITE -> wrote(body, ok);
            case RENAME -> {
                if (!ok) {
                    fail(body);
                } else {
                    step = Step.DONE;
                }
            }
            case DROP_TEMP, DONE -> step = Step.DONE;
        }
    }

    /** A batch written: its first error ends the output (as the server's), else the next batch or the rename. */
    private void wrote(BsonDocument body, boolean ok) {
        BsonDocument scrubbed = DuplicateKeys.scrub(body, target); // a duplicate key's envelope or value stays here
        if (!ok) {
            fail(scrubbed);
        } else if (scrubbed.isArray("writeErrors") && !scrubbed.getArray("writeErrors").isEmpty()) {
            BsonDocument e = scrubbed.getArray("writeErrors").get(0).asDocument();
            BsonDocument error = new BsonDocument("ok", new BsonDouble(0));
            error.put("errmsg", e.isString("errmsg") ? e.getString("errmsg") : new BsonString("write error"));
            error.put("code", e.isNumber("code") ? e.get("code") : new BsonInt32(8));
            if (e.isString("codeName")) {
                error.put("codeName", e.getString("codeName"));
            }
            fail(error);
        } else if (out.merge() && out.whenNotMatched() == OutputStage.WhenNotMatched.FAIL && body.isNumber("n")
                && body.getNumber("n").intValue() < inBatch) {
            fail(error(NO_MATCHING_DOCUMENT, "MergeStageNoMatchingDocument", "$merge could not find a matching "
                    + "document in the target collection for at least one document in the source collection"));
        } else if (pendingFailure != null) {
            fail(pendingFailure);
        } else if (next >= documents.size()) {
            step = out.merge() ? Step.DONE : Step.RENAME;
        }
    }

    /** Ends with this answer: an $out's temporary collection is dropped first. */
    private void fail(BsonDocument error) {
        failure = error;
        step = out.merge() || step == Step.CREATE || step == Step.LIST_INDEXES || step == Step.DROP_TEMP
                ? Step.DONE : Step.DROP_TEMP;
    }

    /** The command of the current step; null when there is nothing left to send. */
    private BsonDocument command(CollectionContext ctx) {
        return switch (step) {
            case LIST_INDEXES -> common(new BsonDocument("listIndexes", new BsonString(out.coll())), out.db(), false);
            case CREATE -> common(new BsonDocument("create", new BsonString(temp)), out.db(), true);
            case INDEXES -> common(new BsonDocument("createIndexes", new BsonString(temp)).append("indexes", indexes),
                    out.db(), true);
            case WRITE -> {
                if (next >= documents.size()) { // nothing to write: an $out still replaces the target
                    step = out.merge() ? Step.DONE : Step.RENAME;
                    yield command(ctx);
                }
                yield out.merge() && out.whenMatched() != OutputStage.WhenMatched.FAIL ? updates(ctx) : inserts(ctx);
            }
            case RENAME -> common(new BsonDocument("renameCollection", new BsonString(out.db() + "." + temp))
                    .append("to", new BsonString(out.namespace())).append("dropTarget", BsonBoolean.TRUE), "admin", true);
            case DROP_TEMP -> {
                step = Step.DONE; // whatever its answer, the failure is what the client gets
                yield common(new BsonDocument("drop", new BsonString(temp)), out.db(), false);
            }
            case DONE -> null;
        };
    }

    /** The next batch as an insert, each document sealed by the target's policy: $out's, and $merge's whenMatched fail. */
    private BsonDocument inserts(CollectionContext ctx) {
        BsonArray batch = new BsonArray();
        long bytes = 0;
        while (next < documents.size() && batch.size() < BATCH_DOCUMENTS) {
            BsonDocument d = documents.get(next);
            if (out.merge()) {
                BsonDocument missing = onFieldProblem(d);
                if (missing != null) {
                    return stopAt(missing, batch);
                }
            }
            BsonDocument sealed = BsonBytes.toRaw(ctx == null ? d : DocumentEncryptor.encryptDocument(d, ctx));
            int size = ((org.bson.RawBsonDocument) sealed).getByteBuffer().remaining();
            if (!batch.isEmpty() && bytes + size > BATCH_BYTES) {
                break;
            }
            batch.add(sealed);
            bytes += size;
            next++;
        }
        inBatch = batch.size();
        return common(new BsonDocument("insert", new BsonString(out.merge() ? out.coll() : temp))
                .append("documents", batch).append("ordered", BsonBoolean.TRUE), out.db(), true);
    }

    /** The next batch of $merge statements: one update by the on fields per document, sealed as a client's update is. */
    private BsonDocument updates(CollectionContext ctx) {
        BsonArray batch = new BsonArray();
        long bytes = 0;
        while (next < documents.size() && batch.size() < BATCH_DOCUMENTS) {
            BsonDocument d = documents.get(next);
            BsonDocument missing = onFieldProblem(d);
            if (missing != null) {
                return stopAt(missing, batch);
            }
            BsonDocument statement = sealed(statement(d), ctx);
            int size = BsonBytes.toRaw(statement).getByteBuffer().remaining();
            if (!batch.isEmpty() && bytes + size > BATCH_BYTES) {
                break;
            }
            batch.add(statement);
            bytes += size;
            next++;
        }
        inBatch = batch.size();
        return common(new BsonDocument("update", new BsonString(out.coll())).append("updates", batch)
                .append("ordered", BsonBoolean.TRUE), out.db(), true);
    }

    /**
     * A document whose on field is missing, null or an array fails the $merge there, as on the
     * server: what comes before it is written first (an empty batch: the failure at once).
     */
    private BsonDocument stopAt(BsonDocument problem, BsonArray batch) {
        if (batch.isEmpty()) {
            failure = problem;
            step = Step.DONE;
            return null;
        }
        pendingFailure = problem; // the batch so far is sent; then the failure
        inBatch = batch.size();
        String cmd = out.whenMatched() == OutputStage.WhenMatched.FAIL ? "insert" : "update";
        return common(new BsonDocument(cmd, new BsonString(out.coll())).append(cmd.equals("insert") ? "documents" : "updates",
                batch).append("ordered", BsonBoolean.TRUE), out.db(), true);
    }

    /** A failure met while building a batch, answered once the documents before it are written. */
    private BsonDocument pendingFailure;

    /** The statement that merges one output document, in plaintext: q by the on fields; u and upsert by the modes. */
    private BsonDocument statement(BsonDocument d) {
        BsonDocument q = new BsonDocument();
        for (String on : out.on()) {
            q.put(on, valueAt(d, on));
        }
        BsonDocument u = switch (out.whenMatched()) {
            case REPLACE -> d;
            case KEEP_EXISTING -> new BsonDocument("$setOnInsert", d);
            case MERGE -> {
                BsonDocument set = new BsonDocument();
                set.putAll(d);
                BsonValue id = set.remove("_id"); // _id is never changed; a new document gets it from q or here
                BsonDocument ops = new BsonDocument();
                if (!set.isEmpty()) {
                    ops.put("$set", set);
                }
                if (id != null && (!out.on().contains("_id") || set.isEmpty())) {
                    ops.put("$setOnInsert", new BsonDocument("_id", id));
                }
                yield ops;
            }
            case FAIL -> throw new IllegalStateException("whenMatched fail inserts");
        };
        return new BsonDocument("q", q).append("u", u)
                .append("upsert", BsonBoolean.valueOf(out.whenNotMatched() == OutputStage.WhenNotMatched.INSERT));
    }

    /** The statement with its filter and update sealed by the target's policy, exactly as a client's update statement. */
    private BsonDocument sealed(BsonDocument statement, CollectionContext ctx) {
        if (ctx == null) {
            return statement;
        }
        BsonDocument one = new BsonDocument("update", new BsonString(out.coll()))
                .append("updates", new BsonArray(List.of(statement))).append("$db", new BsonString(out.db()));
        OpMsg sealed = WriteCommands.update(new OpMsg(0, one), ctx, CommandTable.get("update").arg("updates"));
        return MessageDocuments.of(sealed, "updates").get(0);
    }

    /** Why this document cannot be merged (an on field missing, null or an array), or null. */
    private BsonDocument onFieldProblem(BsonDocument d) {
        for (String on : out.on()) {
            BsonValue v = valueAt(d, on);
            if (v != null && v.isArray()) {
                return error(ON_FIELD_ARRAY, "Location" + ON_FIELD_ARRAY, "$merge write error: 'on' field '" + on
                        + "' is an array");
            }
            if (v == null || v.isNull() || v.getBsonType() == org.bson.BsonType.UNDEFINED) {
                return error(ON_FIELD_MISSING, "Location" + ON_FIELD_MISSING, "$merge write error: 'on' field '" + on
                        + "' cannot be missing, null, undefined or an array");
            }
        }
        return null;
    }

    /** The value at a dotted path through sub-documents (an array on the way is the value); null if missing. */
    private static BsonValue valueAt(BsonDocument d, String path) {
        BsonValue v = d;
        for (String seg : path.split("\\.", -1)) {
            if (!v.isDocument()) {
                return v.isArray() ? v : null;
            }
            v = v.asDocument().get(seg);
            if (v == null) {
                return null;
            }
        }
        return v;
    }

    private BsonDocument common(BsonDocument command, String db, boolean write) {
        command.put("$db", new BsonString(db));
        command.putAll(session);
        if (write) {
            writeOptions.forEach((k, v) -> {
                if (!k.equals("bypassDocumentValidation") || command.containsKey("insert") || command.containsKey("update")) {
                    command.put(k, v);
                }
            });
        }
        return command;
    }

    private static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code)).append("codeName", new BsonString(codeName));
    }

    private ReplyDecision answer(Reply reply, BsonDocument body) {
        return ReplyDecision.replace(reply.encode(new OpMsg(0, body)));
    }
}
