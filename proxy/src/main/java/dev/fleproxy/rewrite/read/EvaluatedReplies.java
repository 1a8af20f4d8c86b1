package dev.fleproxy.rewrite.read;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.BsonLimits;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * The replies to a query the proxy evaluates ({@link EvaluatedQuery}): each batch of candidates
 * decrypted as the stored documents are, the next batch read with getMore on the same upstream
 * connection (an {@link dev.fleproxy.server.UpstreamCalls upstream call}: the client's session and
 * transaction, no other credentials) until the server's cursor is exhausted, then the proxy's
 * part applied and the answer sent in the reply's place: a count or distinct whole, documents in
 * a first batch and the rest held as the proxy's own cursor ({@link HeldCursors}). Past the budget the server's cursor is
 * killed and the query refused (9720012): never a partial answer.
 */
final class EvaluatedReplies {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();
    /** How long one candidate read may take before the query is answered with an error. */
    static final Duration READ_WAIT = Duration.ofMinutes(2);
    /** Room for the reply's own fields around its documents. */
    private static final int ENVELOPE_ROOM = 16 * 1024;
    /** The documents one batch may hold: the reply is one BSON document, of 16 MiB at most. */
    static final int BATCH_BYTES = 16 * 1024 * 1024 - ENVELOPE_ROOM;

    private EvaluatedReplies() {
    }

    /** What a step of the query produced: a batch taken (or not), or the answer to send. */
    private enum Taken { KEYS_PENDING, TAKEN, OVER }

    /** The answer: a cursor's first batch (and whether a cursor was held for it), a count's or a distinct's. */
    private record Answered(BsonDocument body, boolean heldCursor, boolean whole) {
    }

    /**
     * The next step for the query: wait for keys, for the next batch or for the evaluation pool,
     * or the answer (an error reply included) in the reply's place. {@code keys} is this
     * attempt's key lookup. A batch or a candidate set over {@link EvaluationPool#ON_LOOP_BYTES}
     * is decrypted, decoded and evaluated on the pool while the reply lane waits.
     */
    static ReplyDecision onReply(Reply reply, EvaluatedQuery q, CollectionKeys keys, Duration kmsWait,
                                 ProxyMetrics metrics, HeldCursors held, FieldMasks masks, EvaluationPool pool,
                                 CollectionContexts targets) {
        if (q.work != null) {
            return resumed(reply, q, keys, kmsWait, metrics, held, masks, pool, targets);
        }
        if (q.output != null && q.output.started()) {
            return written(reply, q, keys, kmsWait, metrics, targets); // the next write of its $out or $merge
        }
        if (q.call != null) {
            CompletableFuture<Frame> read = q.call.toCompletableFuture();
            if (!read.isDone()) {
                return refuse(reply, q, new Refusal(ProxyError.UPSTREAM_UNAVAILABLE, q.ns() + ": the upstream did not "
                        + "answer the proxy's read of the next candidates within " + READ_WAIT.toSeconds() + " s"), metrics);
            }
            q.call = null;
            if (read.isCompletedExceptionally()) {
                // the connection is closing; never the candidates in place of an answer
                return refuse(reply, q, new Refusal(ProxyError.UPSTREAM_UNAVAILABLE, q.ns() + ": the connection to "
                        + "the upstream closed while the proxy read the candidates of a query it evaluates"), metrics);
            }
            q.batch = read.join();
        }
        OpMsgView view = q.batch == null ? reply.msg() : OpMsgView.of(q.batch);
        if (EvaluationPool.offLoop(view.frame().length())) {
            // its own reference: the lane frees the reply (and the query its batch) if the connection closes meanwhile
            Frame own = view.frame();
            own.retain();
            // the body is copied out, checked and read there too: a batch's bytes are walked on the pool only
            q.work = pool.submit(q.ns(), () -> {
                try {
                    // a step queued for a connection that closed meanwhile is not worth its CPU
                    return q.lease.ended() ? Taken.OVER : read(view, q, keys);
                } finally {
                    own.release();
                }
            });
            return ReplyDecision.await(q.work, READ_WAIT);
        }
        Object outcome = read(view, q, keys);
        if (outcome instanceof ServerRefused r) {
            return serverRefused(reply, q, r);
        }
        return taken(reply, q, (Taken) outcome, keys, kmsWait, metrics, held, masks, pool, targets);
    }

    /** The server's error in place of candidates (it names no plaintext): passed to the client. */
    private record ServerRefused(BsonDocument body) {
    }

    /**
     * A batch read: the server's error, or the batch decrypted and taken. On the loop or the pool,
     * through the thread's own buffers ({@link BatchBuffers}): its body copied out and checked
     * well-formed, decrypted, its candidates examined in place.
     */
    private static Object read(OpMsgView view, EvaluatedQuery q, CollectionKeys keys) {
        BatchBuffers buffers = BatchBuffers.ofThisThread();
        int length = view.bodyLength();
        byte[] stored = buffers.stored(length);
        view.copyBody(stored);
        BsonCursor.validate(BsonCursor.DOCUMENT, stored, 0, length, BsonLimits.MAX_DEPTH);
        RawBsonDocument body = new RawBsonDocument(stored, 0, length);
        if (!body.isNumber("ok") || body.getNumber("ok").doubleValue() != 1.0) {
            return new ServerRefused(body.clone()); // out of the thread's buffer, which the next batch reuses
        }
        ByteBuf out = buffers.decrypted(length + 64); // envelopes open to less than they hold: room enough
        RawBsonDocument decrypted = new ReplyDecryptor(keys, q.shape, q.shape.root, false)
                .decryptBody(stored, length, keys, out);
        buffers.grown(out);
        if (keys.hasPending()) {
            return Taken.KEYS_PENDING;
        }
        byte[] buf = decrypted != null ? out.array() : stored;
        int start = decrypted != null ? out.arrayOffset() + out.readerIndex() : 0;
        int end = start + (decrypted != null ? out.readableBytes() : length);
        CandidateBatch batch = CandidateBatch.in(buf, start, end);
        return q.take(buf, batch.start(), batch.end(), batch.cursorId(), view.frame().length()) ? Taken.TAKEN : Taken.OVER;
    }

    /** The server refused the read: its first reply passed as it is, a later one's error sent in the reply's place. */
    private static ReplyDecision serverRefused(Reply reply, EvaluatedQuery q, ServerRefused r) {
        boolean first = q.batch == null;
        q.releaseBatch();
        return first ? ReplyDecision.PASS : ReplyDecision.replace(reply.encode(new OpMsg(0, r.body())));
    }

    /** Back on the loop after the pool's step: its outcome, or its failure rethrown as it was. */
    private static ReplyDecision resumed(Reply reply, EvaluatedQuery q, CollectionKeys keys, Duration kmsWait,
                                         ProxyMetrics metrics, HeldCursors held, FieldMasks masks, EvaluationPool pool,
                                         CollectionContexts targets) {
        CompletableFuture<Object> work = q.work;
        q.work = null;
        if (!work.isDone()) {
            return refuse(reply, q, new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, q.ns() + ": the proxy could not "
                    + "evaluate this query within " + READ_WAIT.toSeconds() + " s (as many large evaluations ran at "
                    + "once); try again, or narrow the query with a condition the server can evaluate"), metrics);
        }
        Object outcome;
        try {
            outcome = work.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r; // a Refusal or NotEvaluable, answered as on the loop
            }
            throw e;
        }
        if (outcome instanceof Answered a) {
            return answered(reply, q, a, metrics, held);
        }
        if (outcome instanceof ServerRefused r) {
            return serverRefused(reply, q, r);
        }
        if (outcome == OutputWrites.READY) {
            return written(reply, q, keys, kmsWait, metrics, targets);
        }
        return taken(reply, q, (Taken) outcome, keys, kmsWait, metrics, held, masks, pool, targets);
    }

    /** After a batch: fetch keys and read it again, refuse, read the next, or evaluate. On the loop. */
    private static ReplyDecision taken(Reply reply, EvaluatedQuery q, Taken t, CollectionKeys keys, Duration kmsWait,
                                       ProxyMetrics metrics, HeldCursors held, FieldMasks masks, EvaluationPool pool,
                                       CollectionContexts targets) {
        if (t == Taken.KEYS_PENDING) {
            return ReplyDecision.await(keys.fetchPending(), kmsWait); // this batch is decrypted again then
        }
        q.releaseBatch();
        if (t == Taken.OVER) {
            closeServerCursor(reply, q);
            metrics.evaluated(q.ns(), q.overMemory ? ProxyMetrics.EvaluatedOutcome.OVER_MEMORY
                    : ProxyMetrics.EvaluatedOutcome.OVER_BUDGET, q.examined());
            return refuse(reply, q, q.overMemory ? overMemory(q) : overBudget(q), metrics);
        }
        if (q.cursorId != 0) {
            q.call = reply.calls().command(q.getMore());
            return ReplyDecision.awaitUpstream(q.call, READ_WAIT);
        }
        if (!q.walkDone()) {
            q.call = reply.calls().command(q.nextWalkRead()); // the next ring of a range index's grid
            return ReplyDecision.awaitUpstream(q.call, READ_WAIT);
        }
        if (q.output != null) {
            return output(reply, q, keys, kmsWait, metrics, masks, pool, targets);
        }
        long connection = reply.peer().connection();
        if (EvaluationPool.offLoop(q.keptBytes())) {
            q.work = pool.submit(q.ns(), () -> q.lease.ended() ? Taken.OVER : answer(q, masks, held, connection));
            return ReplyDecision.await(q.work, READ_WAIT);
        }
        return answered(reply, q, answer(q, masks, held, connection), metrics, held);
    }

    /**
     * The answer, on the loop or the pool: a count or distinct whole; a find's or an aggregate's
     * documents in a first batch as the server fills one (the client's batchSize, 16 MiB at most),
     * the rest held by the proxy as its own cursor.
     */
    private static Answered answer(EvaluatedQuery q, FieldMasks masks, HeldCursors held, long connection) {
        List<BsonDocument> documents = q.documents(masks);
        if (documents == null) {
            return new Answered(q.answer(masks), false, true);
        }
        ArrayDeque<RawBsonDocument> encoded = new ArrayDeque<>(documents.size());
        for (BsonDocument d : documents) {
            encoded.add(d instanceof RawBsonDocument raw ? raw : new RawBsonDocument(d, CODEC));
        }
        int size = q.firstBatch.size();
        List<RawBsonDocument> first = size == 0 ? List.of() : HeldCursors.take(encoded, size, BATCH_BYTES);
        long id = 0;
        if (!encoded.isEmpty() && !q.firstBatch.single()) {
            id = held.hold(q.ns(), q.lsid(), masks.identity(), connection, encoded);
        }
        return new Answered(batch("firstBatch", first, id, q.ns()), id != 0 && q.lsid() == null, false);
    }

    /**
     * Every candidate read: the pipeline's output computed (on the pool if large), then written by
     * its $out or $merge. An identity that may not see every field of the collection is refused:
     * its masked values would be written as data, and what it may not see would be stored where
     * it may read it.
     */
    private static ReplyDecision output(Reply reply, EvaluatedQuery q, CollectionKeys keys, Duration kmsWait,
                                        ProxyMetrics metrics, FieldMasks masks, EvaluationPool pool,
                                        CollectionContexts targets) {
        if (masks.any()) {
            return refuse(reply, q, new Refusal(ProxyError.FIELD_ACCESS_DENIED, q.ns() + ": identity '"
                    + masks.identity() + "' may not see every encrypted field of this collection, and an $out or "
                    + "$merge would write what it sees as data"), metrics);
        }
        if (EvaluationPool.offLoop(q.keptBytes())) {
            q.work = pool.submit(q.ns(), () -> {
                q.output.start(q.documents(masks));
                return OutputWrites.READY;
            });
            return ReplyDecision.await(q.work, READ_WAIT);
        }
        q.output.start(q.documents(masks));
        return written(reply, q, keys, kmsWait, metrics, targets);
    }

    /** The next step of writing an $out's or a $merge's output; its answer counted once it is sent. */
    private static ReplyDecision written(Reply reply, EvaluatedQuery q, CollectionKeys keys, Duration kmsWait,
                                         ProxyMetrics metrics, CollectionContexts targets) {
        ReplyDecision d = q.output.step(reply, keys, targets, kmsWait);
        if (!(d instanceof ReplyDecision.Await) && !(d instanceof ReplyDecision.AwaitUpstream)) {
            metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.ANSWERED, q.examined());
        }
        return d;
    }

    /** Sends the answer, on the loop: a count's or a distinct's refused if over what a reply may hold. */
    private static ReplyDecision answered(Reply reply, EvaluatedQuery q, Answered a, ProxyMetrics metrics,
                                          HeldCursors held) {
        if (a.heldCursor()) {
            long connection = reply.peer().connection();
            reply.peer().whenClosed(held, () -> held.connectionClosed(connection));
        }
        Frame out = reply.encode(new OpMsg(0, a.body()));
        if (a.whole() && out.length() > BATCH_BYTES + ENVELOPE_ROOM) {
            out.release();
            metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.TOO_LARGE, q.examined());
            return refuse(reply, q, new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, q.ns() + ": the answer to a "
                    + "distinct the proxy evaluated is over the 16 MiB a reply may hold; narrow its query"), metrics);
        }
        metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.ANSWERED, q.examined());
        return ReplyDecision.replace(out);
    }

    /**
     * Kills the server's cursor of candidates if it is still open: the query ended before it was
     * read to the end (over a budget, or a candidate it could not evaluate).
     */
    static void closeServerCursor(Reply reply, EvaluatedQuery q) {
        if (q.cursorId != 0) {
            reply.calls().command(q.killCursor()).thenAccept(Frame::release);
            q.cursorId = 0;
        }
    }

    /** A cursor reply: one batch of documents and the id to read the rest with (0: none). */
    static BsonDocument batch(String name, List<RawBsonDocument> documents, long id, String ns) {
        BsonDocument cursor = new BsonDocument(name, new BsonArray(new ArrayList<>(documents)))
                .append("id", new BsonInt64(id)).append("ns", new BsonString(ns));
        return new BsonDocument("cursor", cursor).append("ok", new BsonInt32(1));
    }

    private static Refusal overMemory(EvaluatedQuery q) {
        return new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, q.ns() + ": the proxy already holds as many "
                + "candidates and answers of queries it evaluates as its maxEvaluationBytes allows, for all clients "
                + "together; try again, or narrow the query with a condition the server can evaluate");
    }

    private static Refusal overBudget(EvaluatedQuery q) {
        return new Refusal(ProxyError.SCAN_BUDGET_EXCEEDED, q.ns() + ": this query needs the proxy to examine more than "
                + q.budget + " documents (the collection's maxScanDocuments) or "
                + EvaluatedQuery.MAX_CANDIDATE_BYTES / (1024 * 1024) + " MiB of them for conditions, sorts or projections "
                + "on encrypted fields that the server cannot evaluate; add a condition on a plain field or equality on "
                + "a deterministic field to narrow the documents the server returns");
    }

    /** The answer replaced by a refusal, counted as one (the request itself was counted as rewritten). */
    private static ReplyDecision refuse(Reply reply, EvaluatedQuery q, Refusal r, ProxyMetrics metrics) {
        q.releaseBatch();
        metrics.replyError(q.command, r.error().code());
        return ReplyDecision.replace(reply.encode(new OpMsg(0, ErrorReplies.document(r.error(),
                r.getMessage()))));
    }

}
