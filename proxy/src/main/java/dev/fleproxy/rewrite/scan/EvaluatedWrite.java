package dev.fleproxy.rewrite.scan;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.rewrite.write.DuplicateKeys;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.evaluate.UpdateArithmetic;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.read.EvaluatedReads;
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
 * An update or delete the proxy carries out itself, statement by statement in the client's order,
 * as steps on the request's own upstream connection. A statement the proxy carries out: read the
 * candidates the server's part of the filter selects (within the scan budget, {@link Candidates}),
 * decrypt them and match the rest, then write each matching document with a filter that also
 * holds every top-level field as it was read (compare-and-swap). A document changed by someone
 * else in between matches no longer: the statement reads again, skipping the documents it wrote
 * already, so no concurrent write is lost and none is applied twice. Consecutive statements the
 * server can run itself are sent to it as one command of their own, ordered as the client's, and
 * its reply folded in with the client's indexes ({@link BatchResult}). An ordered command stops at
 * the first write error, an unordered one goes on. Each step is an await on the request; the
 * messages behind it wait, in order.
 */
final class EvaluatedWrite implements WriteInSteps {
    /** Reads again after this many documents changed under it, then gives up (WriteConflict). */
    static final int MAX_CONFLICTS = 100;
    static final Duration CALL_WAIT = Duration.ofMinutes(2);

    /**
     * Read the candidates, write the matches one by one, (an upsert that matched none) insert, or
     * run statements on the server.
     */
    private enum Step { READ, WRITE, UPSERT, SERVER, PROBE }

    private final boolean update;
    private final CollectionContext ctx;
    private final List<BatchStatement> statements;
    /** What the writes this write sends carry: $db, lsid, $clusterTime; writeConcern, … */
    private final BsonDocument writeCommon;
    private final boolean ordered;
    private final WriteEncryption encryption;
    /** The client's txnNumber, which the writes that apply its statements carry ({@link RetryableWrite}). */
    private final RetryableWrite retry;
    private final TransactionOpening opening;
    private final Candidates reading;
    private int index;
    /** The end (exclusive) of the statements the server runs in the step under way. */
    private int serverEnd;
    private Step step = Step.READ;
    private CompletionStage<Frame> call;
    private List<Candidates.Candidate> matched = List.of();
    private int next;
    private final List<BsonValue> written = new ArrayList<>();
    private int conflicts;
    /** The statement under way has had its probe ({@link RetryableWrite}). */
    private boolean probed;
    /** The matched document the probe under way stands for (nothing in it changes), or null if none matched. */
    private BsonValue unchanged;
    private final BatchResult result = new BatchResult();

    EvaluatedWrite(boolean update, CollectionContext ctx, List<BatchStatement> statements, BsonDocument readCommon,
                   BsonDocument writeCommon, boolean ordered, WriteEncryption encryption, RetryableWrite retry,
                   TransactionOpening opening) {
        this.update = update;
        this.ctx = ctx;
        this.statements = statements;
        this.writeCommon = writeCommon;
        this.ordered = ordered;
        this.encryption = encryption;
        this.retry = retry;
        this.opening = opening;
        this.reading = new Candidates(ctx, readCommon, opening);
    }

    @Override
    public RequestDecision step(Request request, CollectionKeys keys, Duration kmsWait) {
        if (call != null) {
            RequestDecision unanswered = StepCalls.unanswered(call, ctx.ns(), update ? "update" : "delete");
            if (unanswered != null) {
                return unanswered;
            }
            CompletionStage<Frame> answered = call;
            Frame reply = StepCalls.reply(call);
            try {
                RequestDecision waiting = take(request, reply, keys, kmsWait);
                if (waiting != null) {
                    return waiting;
                }
            } finally {
                if (call != answered) { // kept only to be read again once keys are in memory
                    reply.release();
                }
            }
        }
        return advance(request);
    }

    /**
     * Reads one call's reply; a decision if the step goes on waiting: for keys not in memory (the
     * call is kept) or for the next batch of candidates.
     */
    private RequestDecision take(Request request, Frame reply, CollectionKeys keys, Duration kmsWait) {
        OpMsgView view = OpMsgView.of(reply);
        BsonDocument body = view.body();
        if (step == Step.READ) {
            return candidates(request, view, keys, kmsWait);
        }
        call = null;
        if (step == Step.SERVER) {
            server(body);
            return null;
        }
        if (!isOk(body)) {
            fail(body);
            return null;
        }
        result.writeConcern(body);
        if (step == Step.PROBE) {
            probed(body);
            return null;
        }
        if (body.isArray("writeErrors") && !body.getArray("writeErrors").isEmpty()) {
            result.writeError(index, body.getArray("writeErrors").get(0).asDocument()); // the client's statement, not ours
            if (ordered) {
                index = statements.size();
            } else {
                nextStatement();
            }
            return null;
        }
        if (step == Step.UPSERT) {
            counted(body); // a retry's may be the record of a first attempt that updated a document
            nextStatement();
            return null;
        }
        if (body.getNumber("n").intValue() == 1) {
            counted(body);
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

    /**
     * The reply to statements the server ran: summed in with the client's indexes. A command it
     * refused whole is the command's error when nothing came before it, else a write error of its
     * statements (of the first, when ordered: the command stops there).
     */
    private void server(BsonDocument body) {
        int first = index;
        index = serverEnd;
        step = Step.READ;
        if (!isOk(body)) {
            if (first == 0) {
                failWhole(body);
                return;
            }
            for (int i = first; i < serverEnd && (i == first || !ordered); i++) {
                result.commandError(i, body);
            }
            if (ordered) {
                index = statements.size();
            }
            return;
        }
        if (result.fold(body, first) && ordered) {
            index = statements.size();
        }
    }

    /** One reply of the statement's candidate read: the matches kept for writing, the next batch asked, or an await for keys. */
    private RequestDecision candidates(Request request, OpMsgView view, CollectionKeys keys, Duration kmsWait) {
        Candidates.Progress progress = reading.read(view, new ReplyDecryptor(keys, ctx.paths.readShape(),
                ctx.paths.readShape().root, false), keys);
        if (progress == Candidates.Progress.KEYS) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        if (progress == Candidates.Progress.MORE) {
            call = request.calls().command(reading.getMore());
            return RequestDecision.awaitUpstream(call, CALL_WAIT);
        }
        call = null;
        if (progress == Candidates.Progress.REFUSED) {
            if (reading.openCursor() != 0) {
                request.calls().command(reading.killCursor()).thenAccept(Frame::release);
            }
            BatchStatement bs = statements.get(index);
            if (reading.overBudget() && bs.forServer() != null && written.isEmpty()) {
                // one the server could run, taken for its exact count: too many to read, so the server runs it
                serverEnd = index + 1;
                call = request.calls().command(serverRun(index, serverEnd));
                step = Step.SERVER;
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            if (!reading.overBudget() && !Candidates.failsWholeCommand(reading.error())) {
                // as the server reports its own read for the write (a hint naming no index): the statement's write error
                result.commandError(index, reading.error());
                if (ordered) {
                    index = statements.size();
                } else {
                    nextStatement();
                }
                return null;
            }
            fail(reading.error());
            return null;
        }
        WriteStatement st = statements.get(index).proxied();
        matched = new ArrayList<>();
        try {
            for (Candidates.Candidate c : reading.documents()) {
                if (st.residual() == null || st.residual().matches(c.plain())) {
                    matched.add(c);
                    if (!st.multi()) {
                        break;
                    }
                }
            }
        } catch (NotEvaluable e) {
            notEvaluable(e);
            return null;
        }
        next = 0;
        step = Step.WRITE;
        return null;
    }

    /** Sends the next call, or answers when every statement is done. */
    private RequestDecision advance(Request request) {
        while (index < statements.size()) {
            if (statements.get(index).byServer()) {
                serverEnd = index;
                while (serverEnd < statements.size() && statements.get(serverEnd).byServer()) {
                    serverEnd++;
                }
                call = request.calls().command(serverRun(index, serverEnd));
                step = Step.SERVER;
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            WriteStatement st = statements.get(index).proxied();
            if (step == Step.READ) {
                call = request.calls().command(reading.find(st.split().server(), written, st.hint()));
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            if (next < matched.size() && (st.multi() || written.isEmpty())) {
                try {
                    BsonDocument command = writeOne(st, matched.get(next));
                    if (command == null && retry.retryable() && !probed) {
                        // nothing changes now: perhaps because a first attempt changed it
                        unchanged = matched.get(next).stored().get("_id");
                        return probe(request);
                    }
                    if (command == null) { // matched, and nothing in it changes: as the server counts it
                        result.matched(1, 0);
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
                } catch (NotEvaluable e) {
                    notEvaluable(e);
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
                } catch (NotEvaluable e) {
                    notEvaluable(e);
                    continue;
                }
                step = Step.UPSERT;
                return RequestDecision.awaitUpstream(call, CALL_WAIT);
            }
            if (retry.retryable() && written.isEmpty() && !probed) {
                return probe(request); // nothing matches now: perhaps because a first attempt changed it
            }
            nextStatement();
        }
        return answer(request, result.reply(update));
    }

    /** The command of the statements [from, to) the server runs: as the client ordered them, with its session fields. */
    private BsonDocument serverRun(int from, int to) {
        BsonArray run = new BsonArray();
        for (int i = from; i < to; i++) {
            run.add(statements.get(i).forServer());
        }
        BsonDocument cmd = new BsonDocument(update ? "update" : "delete", new BsonString(ctx.policy.collection()))
                .append(update ? "updates" : "deletes", run).append("ordered", org.bson.BsonBoolean.valueOf(ordered));
        cmd.putAll(writeCommon);
        return opening.first(retry.statements(cmd, from, to));
    }

    /** A statement's arithmetic failed as the server's would (code 14): its write error; true if the command stops. */
    private boolean failed(UpdateArithmetic.Failure f) {
        result.writeError(index, new BsonDocument("code", new BsonInt32(f.code))
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
        return retry.statements(cmd, index, index + 1);
    }

    private void nextStatement() {
        index++;
        step = Step.READ;
        matched = List.of();
        written.clear();
        conflicts = 0;
        probed = false;
        unchanged = null;
    }

    /** Sends the statement's probe: the server answers it from its record if a first attempt applied the statement. */
    private RequestDecision probe(Request request) {
        call = request.calls().command(retry.probe(ctx.policy.collection(), update, index, writeCommon));
        step = Step.PROBE;
        return RequestDecision.awaitUpstream(call, CALL_WAIT);
    }

    /**
     * The probe's reply: the first attempt's outcome if the server recorded one (the statement is
     * done), else what this attempt found: the unchanged document matched, or nothing.
     */
    private void probed(BsonDocument body) {
        probed = true;
        step = Step.WRITE;
        if (RetryableWrite.wrote(body)) {
            counted(body);
            written.add(unchanged != null ? unchanged : org.bson.BsonNull.VALUE); // the statement is done
        } else if (unchanged != null) {
            result.matched(1, 0);
            written.add(unchanged);
        }
        if (unchanged != null) {
            next++;
        }
        unchanged = null;
    }

    /** A write's reply that applied the statement (or a retry's, answered from the server's record): counted as the client's. */
    private void counted(BsonDocument body) {
        if (body.isArray("upserted") && !body.getArray("upserted").isEmpty()) {
            result.upserted(index, body.getArray("upserted").get(0).asDocument().get("_id"));
        } else {
            result.matched(body.getNumber("n").intValue(), body.containsKey("nModified") ? body.getNumber("nModified").longValue() : 0);
        }
    }

    /** The command that writes one matched document if, and only if, it is still as it was read. */
    private BsonDocument writeOne(WriteStatement st, Candidates.Candidate c) {
        BsonDocument guard = Candidates.guard(c.stored(), st.split().server(), update ? st.computedTopLevel() : List.of());
        if (!update) {
            BsonDocument d = new BsonDocument("delete", new BsonString(ctx.policy.collection()))
                    .append("deletes", new BsonArray(List.of(new BsonDocument("q", guard).append("limit", new BsonInt32(1)))));
            d.putAll(writeCommon);
            return retry.statements(d, index, index + 1);
        }
        BsonDocument plainUpdate = st.updateFor(c.plain());
        if (plainUpdate.isEmpty()) {
            return null;
        }
        BsonDocument u = encryption.update(plainUpdate);
        BsonDocument cmd = new BsonDocument("update", new BsonString(ctx.policy.collection()))
                .append("updates", new BsonArray(List.of(new BsonDocument("q", guard).append("u", u))));
        cmd.putAll(writeCommon);
        return retry.statements(cmd, index, index + 1);
    }

    private BsonDocument failure;

    /**
     * The statement under way failed (the server refused one of the proxy's writes, over the
     * budget, kept changing, not evaluable on the documents read). A command of one statement
     * answers with the error, as before; in a command of several it is the statement's write
     * error, so that what the statements before it did is reported, and an ordered command stops
     * there while an unordered one goes on.
     */
    private void fail(BsonDocument error) {
        if (statements.size() == 1) {
            failWhole(error);
            return;
        }
        result.commandError(index, error);
        if (ordered) {
            index = statements.size();
        } else {
            nextStatement();
        }
    }

    /** The command fails as a whole: answered with this error. */
    private void failWhole(BsonDocument error) {
        failure = error;
        index = statements.size();
    }

    /**
     * Met while matching or computing on a document read (its message may quote a value, so it
     * is not repeated): refused by the filter for a command of one statement, as before; the
     * statement's write error in a command of several.
     */
    private void notEvaluable(NotEvaluable e) {
        if (statements.size() == 1) {
            throw e;
        }
        fail(error(ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, EvaluatedReads.DATA_NOT_EVALUABLE));
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
