package dev.fleproxy.rewrite.scan;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.rewrite.write.DuplicateKeys;
import dev.fleproxy.rewrite.evaluate.DocumentProjection;
import dev.fleproxy.rewrite.evaluate.DocumentSort;
import dev.fleproxy.rewrite.evaluate.UpdateArithmetic;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.read.FieldMasks;
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
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * A findAndModify the proxy carries out itself: the candidates read and matched as for an update
 * ({@link Candidates}), the first by the statement's sort (on plaintext) chosen, then written by
 * compare-and-swap — a findAndModify (update) or a delete (remove) whose query holds the document
 * as it was read — and the document returned decrypted and projected, as the server would return
 * it. A document changed in between is read again (bounded, as {@link EvaluatedWrite}).
 */
final class EvaluatedFindAndModify implements WriteInSteps {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private final CollectionContext ctx;
    private final WriteStatement statement;
    private final DocumentSort sort;
    private final DocumentProjection fields;
    private final boolean remove;
    private final boolean returnNew;
    private final BsonDocument writeCommon;
    private final EvaluatedWrite.WriteEncryption encryption;
    /** What the connection's identity gets instead of the fields it may not see, in the document returned. */
    private final FieldMasks masks;
    private final Candidates reading;
    private CompletionStage<Frame> call;
    private Candidates.Candidate chosen;
    private int conflicts;
    private BsonDocument answer;
    /** Nothing matched and the command upserts: the write under way inserts. */
    private boolean upserting;
    /** The client's txnNumber, which the write carries ({@link RetryableWrite}). */
    private final RetryableWrite retry;
    /**
     * A probe is under way ({@link RetryableWrite}): the answer if the server has no record of a
     * first attempt (nothing matched, or the chosen document unchanged), else null.
     */
    private BsonDocument unrecorded;

    EvaluatedFindAndModify(CollectionContext ctx, WriteStatement statement, DocumentSort sort, DocumentProjection fields,
                           boolean remove, boolean returnNew, BsonDocument readCommon, BsonDocument writeCommon,
                           EvaluatedWrite.WriteEncryption encryption, FieldMasks masks, RetryableWrite retry,
                           TransactionOpening opening) {
        this.masks = masks;
        this.retry = retry;
        this.ctx = ctx;
        this.statement = statement;
        this.sort = sort;
        this.fields = fields;
        this.remove = remove;
        this.returnNew = returnNew;
        this.writeCommon = writeCommon;
        this.encryption = encryption;
        this.reading = new Candidates(ctx, readCommon, opening);
    }

    @Override
    public RequestDecision step(Request request, CollectionKeys keys, Duration kmsWait) {
        if (call != null) {
            RequestDecision unanswered = StepCalls.unanswered(call, ctx.ns(), "findAndModify");
            if (unanswered != null) {
                return unanswered;
            }
            CompletionStage<Frame> answered = call;
            Frame reply = StepCalls.reply(call);
            try {
                OpMsgView view = OpMsgView.of(reply);
                ReplyDecryptor decryptor = new ReplyDecryptor(keys, ctx.paths.readShape(), ctx.paths.readShape().root, false);
                if (chosen == null && !upserting && unrecorded == null) {
                    switch (reading.read(view, decryptor, keys)) {
                        case KEYS:
                            return RequestDecision.await(keys.fetchPending(), kmsWait); // the call is kept, read again
                        case MORE:
                            call = request.calls().command(reading.getMore());
                            return RequestDecision.awaitUpstream(call, EvaluatedWrite.CALL_WAIT);
                        case REFUSED:
                            call = null;
                            if (reading.openCursor() != 0) {
                                request.calls().command(reading.killCursor()).thenAccept(Frame::release);
                            }
                            return answer(reading.error());
                        default:
                            call = null;
                    }
                    chosen = choose(reading.documents());
                    if (chosen == null) {
                        if (statement.upsert() != null) {
                            return upsert(request);
                        }
                        if (retry.retryable()) { // nothing matches now: perhaps because a first attempt changed it
                            return probe(request, result(false, BsonNull.VALUE));
                        }
                        return answer(result(false, BsonNull.VALUE));
                    }
                } else {
                    RequestDecision next = written(view, decryptor, keys, kmsWait);
                    if (next != null) {
                        return next;
                    }
                }
            } finally {
                if (call != answered) {
                    reply.release();
                }
            }
        }
        if (answer != null) {
            return answer(answer);
        }
        if (chosen == null && !upserting) {
            call = request.calls().command(reading.find(statement.split().server(), List.of(), statement.hint()));
            return RequestDecision.awaitUpstream(call, EvaluatedWrite.CALL_WAIT);
        }
        return write(request);
    }

    /**
     * Nothing matched an upsert: the server is sent a findAndModify upsert of the query's
     * equalities under a condition no document meets ({@link UpsertSeed}), the update computed on them.
     */
    private RequestDecision upsert(Request request) {
        BsonDocument stored = encryption.update(new BsonDocument("$set", statement.upsert())).getDocument("$set");
        BsonDocument plainUpdate;
        try {
            plainUpdate = statement.updateFor(UpsertSeed.document(statement.upsert()));
        } catch (UpdateArithmetic.Failure f) {
            return answer(failure(f));
        }
        BsonDocument u = plainUpdate.isEmpty() ? new BsonDocument("$setOnInsert", stored) : encryption.update(plainUpdate);
        BsonDocument cmd = new BsonDocument("findAndModify", new BsonString(ctx.policy.collection()))
                .append("query", UpsertSeed.serverFilter(stored)).append("update", u).append("upsert", BsonBoolean.TRUE)
                .append("new", BsonBoolean.valueOf(returnNew));
        cmd.putAll(writeCommon);
        retry.statement(cmd);
        upserting = true;
        call = request.calls().command(cmd);
        return RequestDecision.awaitUpstream(call, EvaluatedWrite.CALL_WAIT);
    }

    private static BsonDocument failure(UpdateArithmetic.Failure f) {
        return new BsonDocument("ok", new BsonInt32(0)).append("errmsg", new BsonString(f.getMessage()))
                .append("code", new BsonInt32(f.code)).append("codeName", new BsonString(f.codeName));
    }

    /** The first matching candidate, by the sort when there is one (ties keep the server's order). */
    private Candidates.Candidate choose(List<Candidates.Candidate> candidates) {
        List<Candidates.Candidate> matched = new ArrayList<>();
        for (Candidates.Candidate c : candidates) {
            if (statement.residual() == null || statement.residual().matches(c.plain())) {
                matched.add(c);
            }
        }
        if (matched.isEmpty()) {
            return null;
        }
        if (sort != null) {
            matched.sort((a, b) -> sort.comparator().compare(a.plain(), b.plain()));
        }
        return matched.get(0);
    }

    private RequestDecision write(Request request) {
        BsonDocument guard = Candidates.guard(chosen.stored(), statement.split().server(),
                remove ? List.of() : statement.computedTopLevel());
        BsonDocument cmd;
        if (remove) {
            cmd = new BsonDocument("findAndModify", new BsonString(ctx.policy.collection())).append("query", guard)
                    .append("remove", BsonBoolean.TRUE);
        } else {
            BsonDocument plainUpdate;
            try {
                plainUpdate = statement.updateFor(chosen.plain());
            } catch (UpdateArithmetic.Failure f) {
                return answer(failure(f));
            }
            if (plainUpdate.isEmpty()) { // nothing changes: the document as read is both images
                BsonDocument same = result(true, project(chosen.plain()));
                return retry.retryable() ? probe(request, same) : answer(same);
            }
            cmd = new BsonDocument("findAndModify", new BsonString(ctx.policy.collection())).append("query", guard)
                    .append("update", encryption.update(plainUpdate)).append("new", BsonBoolean.valueOf(returnNew));
        }
        cmd.putAll(writeCommon);
        call = request.calls().command(retry.statement(cmd));
        return RequestDecision.awaitUpstream(call, EvaluatedWrite.CALL_WAIT);
    }

    /** Sends the probe of a retried findAndModify that would write nothing; {@code otherwise} answers if the server recorded nothing. */
    private RequestDecision probe(Request request, BsonDocument otherwise) {
        unrecorded = otherwise;
        call = request.calls().command(retry.probe(ctx.policy.collection(), remove, returnNew, writeCommon));
        return RequestDecision.awaitUpstream(call, EvaluatedWrite.CALL_WAIT);
    }

    /** The reply to the write: the answer, a read again after a conflict, or a wait for keys. */
    private RequestDecision written(OpMsgView view, ReplyDecryptor decryptor, CollectionKeys keys, Duration kmsWait) {
        BsonDocument body = view.body();
        if (!body.isNumber("ok") || body.getNumber("ok").doubleValue() != 1.0) {
            call = null;
            answer = body;
            return null;
        }
        Frame decrypted = decryptor.decrypt(view, io.netty.buffer.ByteBufAllocator.DEFAULT, keys);
        if (keys.hasPending()) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        call = null;
        BsonDocument out;
        try {
            out = decrypted == null ? body : OpMsg.parse(decrypted).body();
        } finally {
            if (decrypted != null) {
                decrypted.release();
            }
        }
        BsonValue value = out.get("value");
        if (unrecorded != null) { // the probe's reply: the first attempt's record, if the server has one
            answer = !RetryableWrite.wrote(out) ? unrecorded
                    : new BsonDocument("lastErrorObject", out.getDocument("lastErrorObject", new BsonDocument()))
                    .append("value", value == null || value.isNull() ? BsonNull.VALUE : project(document(value)))
                    .append("ok", new BsonInt32(1));
            unrecorded = null;
            return null;
        }
        if (upserting) { // inserted: the server's lastErrorObject (upserted: the new _id), the new document if asked
            answer = new BsonDocument("lastErrorObject", out.getDocument("lastErrorObject", new BsonDocument()))
                    .append("value", value == null || value.isNull() ? BsonNull.VALUE : project(document(value)))
                    .append("ok", new BsonInt32(1));
            return null;
        }
        if (value == null || value.isNull()) {
            chosen = null; // changed since it was read: read again
            if (++conflicts > EvaluatedWrite.MAX_CONFLICTS) {
                answer = ErrorReplies.document(ProxyError.UNSUPPORTED_COMMAND, ctx.ns() + ": the documents of this "
                        + "findAndModify kept changing under it; try again");
            }
            return null;
        }
        answer = result(!remove, project(document(value)));
        return null;
    }

    private static BsonDocument document(BsonValue value) {
        return value instanceof RawBsonDocument raw ? raw.decode(CODEC) : value.asDocument();
    }

    private BsonValue project(BsonDocument doc) {
        BsonDocument seen = masks.any() ? masks.applyTo(doc) : doc;
        BsonDocument out = fields == null ? seen : fields.apply(seen);
        if (masks.any()) {
            masks.refuseDenied(java.util.List.of(out));
        }
        return out;
    }

    private BsonDocument result(boolean updatedExisting, BsonValue value) {
        BsonDocument last = new BsonDocument("n", new BsonInt32(value.isNull() ? 0 : 1));
        if (!remove) {
            last.append("updatedExisting", BsonBoolean.valueOf(updatedExisting && !value.isNull()));
        }
        return new BsonDocument("lastErrorObject", last).append("value", value).append("ok", new BsonInt32(1));
    }

    private RequestDecision answer(BsonDocument body) {
        // the server's error it passes on may hold a duplicate key's envelope
        return RequestDecision.answer(new OpMsg(0, DuplicateKeys.scrub(body, ctx.policy)));
    }
}
