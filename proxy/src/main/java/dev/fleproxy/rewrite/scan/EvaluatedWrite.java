package dev.fleproxy.rewrite.scan;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.rewrite.write.DuplicateKeys;
import dev.fleproxy.rewrite.evaluate.UpdateArithmetic;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.read.ReplyDecryptor;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * An update or delete the proxy carries out itself, statement by statement, as steps on the
 * request's own upstream connection: read the candidates the server's part of the filter selects
 * (within the scan budget), decrypt them and match the rest, then write each matching document
 * with a filter that also holds every top-level field as it was read (compare-and-swap). A
 * document changed by someone else in between matches no longer: the statement reads again,
 * skipping the documents it wrote already, so no concurrent write is lost and none is applied
 * twice. Each step is an await on the request; the messages behind it wait, in order.
 */
final class EvaluatedWrite implements WriteInSteps {
    /** Reads again after this many documents changed under it, then gives up (WriteConflict). */
    static final int MAX_CONFLICTS = 100;
    static final Duration CALL_WAIT = Duration.ofMinutes(2);

    /** Read the candidates, write the matches one by one, or (an upsert that matched none) insert. */
    private enum Step { READ, WRITE, UPSERT }

    private final boolean update;
    private final CollectionContext ctx;
    private final List<WriteStatement> statements;
    /** What the reads and the writes this write sends carry: $db, lsid, $clusterTime; writeConcern, … for writes. */
    private final BsonDocument readCommon;
    private final BsonDocument writeCommon;
    private final boolean ordered;
    private final WriteEncryption encryption;
    private int index;
    private Step step = Step.READ;
    private CompletionStage<Frame> call;
    private List<Candidates.Candidate> matched = List.of();
    private int next;
    private final List<BsonValue> written = new ArrayList<>();
    private int conflicts;
    private long n;
    private long nModified;
    private final BsonArray writeErrors = new BsonArray();
    private final BsonArray upserted = new BsonArray();

    EvaluatedWrite(boolean update, CollectionContext ctx, List<WriteStatement> statements, BsonDocument readCommon,
                   BsonDocument writeCommon, boolean ordered, WriteEncryption encryption) {
        this.update = update;
        this.ctx = ctx;
        this.statements = statements;
        this.readCommon = readCommon;
        this.writeCommon = writeCommon;
        this.ordered = ordered;
        this.encryption = encryption;
    }

    @Override
    public RequestDecision step(Request request, CollectionKeys keys, Duration kmsWait) {
        if (call != null) {
            RequestDecision unanswered = StepCalls.unanswered(call, ctx.ns(), update ? "update" : "delete");
            if (unanswered != null) {
                return unanswered;
            }
            Frame reply = StepCalls.reply(call);
            try {
                RequestDecision waitForKeys = take(request, reply, keys, kmsWait);
                if (waitForKeys != null) {
                    return waitForKeys;
                }
            } finally {
                if (call == null) {
                    reply.release();
                }
            }
        }
        return advance(request);
    }

    /** Reads one call's reply; an await decision if its candidates need keys not in memory (the call is kept). */
    private RequestDecision take(Request request, Frame reply, CollectionKeys keys, Duration kmsWait) {
        OpMsgView view = OpMsgView.of(reply);
        BsonDocument body = view.body();
        if (step == Step.READ) {
            return candidates(request, view, keys, kmsWait);
        }
        call = null;
        if (!isOk(body)) {
            fail(body);
            return null;
        }
        if (body.isArray("writeErrors") && !body.getArray("writeErrors").isEmpty()) {
            BsonDocument e = new BsonDocument("index", new BsonInt32(index)); // the client's statement, not ours
            body.getArray("writeErrors").get(0).asDocument().forEach((k, v) -> {
                if (!k.equals("index")) {
                    e.put(k, v);
                }
            });
            writeErrors.add(e);
            if (ordered) {
                index = statements.size();
            } else {
                nextStatement();
            }
            return null;
        }
        if (step == Step.UPSERT) {
            n += body.getNumber("n").intValue();
            if (body.isArray("upserted") && !body.getArray("upserted").isEmpty()) {
                upserted.add(new BsonDocument("index", new BsonInt32(index))
                        .append("_id", body.getArray("upserted").get(0).asDocument().get("_id")));
            }
            nextStatement();
            return null;
        }
        if (body.getNumber("n").intValue() == 1) {
            n++;
            nModified += body.containsKey("nModified") ? body.getNumber("nModified").longValue() : 0;
            written.add(matched.get(next).stored().get("_id"));
            next++;
        } else if (++conflicts > MAX_CONFLICTS) {
            fail(error(ProxyError.UNSUPPORTED_COMMAND, "the documents of this write kept changing under it ("
                    + MAX_CONFLICTS + " times); try again"));
        } else {
            step = Step.READ; // changed since it was read: read the statement's candidates again
        }
        return null;
    }

    /** The statement's candidates read: the matches kept for writing; an await if keys are missing. */
    private RequestDecision candidates(Request request, OpMsgView view, CollectionKeys keys, Duration kmsWait) {
        Candidates found = Candidates.read(view, new ReplyDecryptor(keys, ctx.paths.readShape(),
                ctx.paths.readShape().root, false), keys, ctx.policy.maxScanDocuments());
        if (keys.hasPending()) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        call = null;
        if (found.error() != null) {
            if (found.openCursor() != 0) {
                request.calls().command(Candidates.killCursor(ctx, found.openCursor(), readCommon))
                        .thenAccept(Frame::release);
            }
            fail(found.error());
            return null;
        }
        WriteStatement st = statements.get(index);
        matched = new ArrayList<>();
        for (Candidates.Candidate c : found.documents()) {
            if (st.residual() == null || st.residual().matches(c.plain())) {
                matched.add(c);
                if (!st.multi()) {
                    break;
                }
            }
        }
        next = 0;
        step = Step.WRITE;
        return null;
    }

    /** Sends the next call, or answers when every statement is done. */
    private RequestDecision advance(Request request) {
        while (index < statements.size()) {
            WriteStatement st = statements.get(index);
            if (step == Step.READ) {
                call = request.calls().command(Candidates.find(ctx, st.split().server(), written, readCommon));
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            if (next < matched.size() && (st.multi() || written.isEmpty())) {
                try {
                    BsonDocument command = writeOne(st, matched.get(next));
                    if (command == null) { // matched, and nothing in it changes: as the server counts it
                        n++;
                        written.add(matched.get(next).stored().get("_id"));
                        next++;
                        continue;
                    }
                    call = request.calls().command(command);
                } catch (UpdateArithmetic.Failure f) {
                    if (failed(f)) {
                        break;
                    }
                    continue;
                }
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            if (st.upsert() != null && written.isEmpty()) {
                try {
                    call = request.calls().command(upsertOne(st));
                } catch (UpdateArithmetic.Failure f) {
                    if (failed(f)) {
                        break;
                    }
                    continue;
                }
                step = Step.UPSERT;
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            nextStatement();
        }
        return answer(request, result());
    }

    /** A statement's arithmetic failed as the server's would (code 14): its write error; true if the command stops. */
    private boolean failed(UpdateArithmetic.Failure f) {
        writeErrors.add(new BsonDocument("index", new BsonInt32(index)).append("code", new BsonInt32(f.code))
                .append("codeName", new BsonString(f.codeName)).append("errmsg", new BsonString(f.getMessage())));
        if (ordered) {
            return true;
        }
        nextStatement();
        return false;
    }

    /**
     * An upsert that matched nothing: sent to the server as an upsert of its filter's equalities
     * (values as stored) under a condition no document meets, with the update computed on them.
     */
    private BsonDocument upsertOne(WriteStatement st) {
        BsonDocument stored = encryption.update(new BsonDocument("$set", st.upsert())).getDocument("$set");
        BsonDocument plainUpdate = st.updateFor(UpsertSeed.document(st.upsert()));
        // nothing to change in the new document (a $max equal to its seed): it is the seed alone
        BsonDocument u = plainUpdate.isEmpty() ? new BsonDocument("$setOnInsert", stored) : encryption.update(plainUpdate);
        BsonDocument cmd = new BsonDocument("update", new BsonString(ctx.policy.collection()))
                .append("updates", new BsonArray(List.of(new BsonDocument("q", UpsertSeed.serverFilter(stored))
                        .append("u", u).append("upsert", org.bson.BsonBoolean.TRUE))));
        cmd.putAll(writeCommon);
        return cmd;
    }

    private void nextStatement() {
        index++;
        step = Step.READ;
        matched = List.of();
        written.clear();
        conflicts = 0;
    }

    /** The command that writes one matched document if, and only if, it is still as it was read. */
    private BsonDocument writeOne(WriteStatement st, Candidates.Candidate c) {
        BsonDocument guard = Candidates.guard(c.stored(), st.split().server(), update ? st.computedTopLevel() : List.of());
        if (!update) {
            BsonDocument d = new BsonDocument("delete", new BsonString(ctx.policy.collection()))
                    .append("deletes", new BsonArray(List.of(new BsonDocument("q", guard).append("limit", new BsonInt32(1)))));
            d.putAll(writeCommon);
            return d;
        }
        BsonDocument plainUpdate = st.updateFor(c.plain());
        if (plainUpdate.isEmpty()) {
            return null;
        }
        BsonDocument u = encryption.update(plainUpdate);
        BsonDocument cmd = new BsonDocument("update", new BsonString(ctx.policy.collection()))
                .append("updates", new BsonArray(List.of(new BsonDocument("q", guard).append("u", u))));
        cmd.putAll(writeCommon);
        return cmd;
    }

    private BsonDocument result() {
        BsonDocument out = new BsonDocument("n", new BsonInt32((int) n));
        if (update) {
            out.append("nModified", new BsonInt32((int) nModified));
        }
        if (!upserted.isEmpty()) {
            out.append("upserted", upserted);
        }
        if (!writeErrors.isEmpty()) {
            out.append("writeErrors", writeErrors);
        }
        return out.append("ok", new BsonInt32(1));
    }

    private BsonDocument failure;

    private void fail(BsonDocument error) {
        failure = error;
        index = statements.size();
    }

    private RequestDecision answer(Request request, BsonDocument body) {
        // the server's errors it passes on may hold a duplicate key's envelope
        return RequestDecision.answer(new OpMsg(0, DuplicateKeys.scrub(failure != null ? failure : body, ctx.policy)));
    }

    private BsonDocument error(ProxyError e, String message) {
        return ErrorReplies.document(e, ctx.ns() + ": " + message);
    }

    private static boolean isOk(BsonDocument body) {
        return body.isNumber("ok") && body.getNumber("ok").doubleValue() == 1.0;
    }

    /** Encrypts an update document as the server path does (the policy's fields sealed). */
    interface WriteEncryption {
        BsonDocument update(BsonDocument u);
    }
}
