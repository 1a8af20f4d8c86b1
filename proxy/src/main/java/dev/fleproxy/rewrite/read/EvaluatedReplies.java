package dev.fleproxy.rewrite.read;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
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

    /**
     * The next step for the query: wait for keys or for the next batch, or the answer (an error
     * reply included) in the reply's place. {@code keys} is this attempt's key lookup.
     */
    static ReplyDecision onReply(Reply reply, EvaluatedQuery q, CollectionKeys keys, Duration kmsWait,
                                 ProxyMetrics metrics, HeldCursors held, FieldMasks masks) {
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
        boolean first = q.batch == null;
        OpMsgView view = first ? reply.msg() : OpMsgView.of(q.batch);
        int size = view.frame().length();
        BsonDocument body = view.body();
        if (!body.isNumber("ok") || body.getNumber("ok").doubleValue() != 1.0) {
            // the server refused the read: its error goes to the client (it names no plaintext)
            q.releaseBatch();
            return first ? ReplyDecision.PASS : ReplyDecision.replace(reply.encode(new OpMsg(0, body)));
        }
        Frame decrypted = new ReplyDecryptor(keys, q.shape, q.shape.root, false).decrypt(view, reply.alloc(), keys);
        if (keys.hasPending()) {
            return ReplyDecision.await(keys.fetchPending(), kmsWait); // this batch is decrypted again then
        }
        BsonDocument cursor = (decrypted != null ? bodyOf(decrypted) : body).getDocument("cursor");
        q.releaseBatch();
        BsonArray documents = cursor.containsKey("firstBatch") ? cursor.getArray("firstBatch") : cursor.getArray("nextBatch");
        if (!q.take(documents, cursor.getNumber("id").longValue(), size)) {
            if (q.cursorId != 0) {
                reply.calls().command(q.killCursor()).thenAccept(Frame::release);
            }
            metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.OVER_BUDGET, q.examined());
            return refuse(reply, q, overBudget(q), metrics);
        }
        if (q.cursorId != 0) {
            q.call = reply.calls().command(q.getMore());
            return ReplyDecision.awaitUpstream(q.call, READ_WAIT);
        }
        List<BsonDocument> answer = q.documents(masks);
        if (answer == null) {
            return answer(reply, q, masks, metrics); // a count's or a distinct's, which may not fit
        }
        metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.ANSWERED, q.examined());
        return firstBatch(reply, q, answer, held, masks);
    }

    /** A count's or a distinct's answer: one document, refused if over what a reply may hold. */
    private static ReplyDecision answer(Reply reply, EvaluatedQuery q, FieldMasks masks, ProxyMetrics metrics) {
        Frame out = reply.encode(new OpMsg(0, q.answer(masks)));
        if (out.length() > BATCH_BYTES + ENVELOPE_ROOM) {
            out.release();
            metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.TOO_LARGE, q.examined());
            return refuse(reply, q, new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, q.ns() + ": the answer to a "
                    + "distinct the proxy evaluated is over the 16 MiB a reply may hold; narrow its query"), metrics);
        }
        metrics.evaluated(q.ns(), ProxyMetrics.EvaluatedOutcome.ANSWERED, q.examined());
        return ReplyDecision.replace(out);
    }

    /**
     * The first batch of a find's or an aggregate's answer, as the server fills one (the client's
     * batchSize, 16 MiB at most); the rest, if any, held by the proxy as its own cursor.
     */
    private static ReplyDecision firstBatch(Reply reply, EvaluatedQuery q, List<BsonDocument> documents,
                                            HeldCursors held, FieldMasks masks) {
        ArrayDeque<RawBsonDocument> encoded = new ArrayDeque<>(documents.size());
        for (BsonDocument d : documents) {
            encoded.add(d instanceof RawBsonDocument raw ? raw : new RawBsonDocument(d, CODEC));
        }
        int size = q.firstBatch.size();
        List<RawBsonDocument> first = size == 0 ? List.of() : HeldCursors.take(encoded, size, BATCH_BYTES);
        long id = 0;
        if (!encoded.isEmpty() && !q.firstBatch.single()) {
            long connection = reply.peer().connection();
            id = held.hold(q.ns(), q.lsid(), masks.identity(), connection, encoded);
            if (q.lsid() == null) {
                reply.peer().whenClosed(held, () -> held.connectionClosed(connection));
            }
        }
        return ReplyDecision.replace(reply.encode(new OpMsg(0, batch("firstBatch", first, id, q.ns()))));
    }

    /** A cursor reply: one batch of documents and the id to read the rest with (0: none). */
    static BsonDocument batch(String name, List<RawBsonDocument> documents, long id, String ns) {
        BsonDocument cursor = new BsonDocument(name, new BsonArray(new ArrayList<>(documents)))
                .append("id", new BsonInt64(id)).append("ns", new BsonString(ns));
        return new BsonDocument("cursor", cursor).append("ok", new BsonInt32(1));
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

    private static BsonDocument bodyOf(Frame decrypted) {
        try {
            return OpMsg.parse(decrypted).body();
        } finally {
            decrypted.release();
        }
    }
}
