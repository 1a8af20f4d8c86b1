package dev.fleproxy.rewrite.read;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * The replies to a query the proxy evaluates ({@link EvaluatedQuery}): each batch of candidates
 * decrypted as the stored documents are, the next batch read with getMore on the same upstream
 * connection (an {@link dev.fleproxy.server.UpstreamCalls upstream call}: the client's session and
 * transaction, no other credentials) until the server's cursor is exhausted, then the proxy's
 * part applied and the answer sent in the reply's place. Past the budget the server's cursor is
 * killed and the query refused (9720012): never a partial answer.
 */
final class EvaluatedReplies {
    /** How long one candidate read may take before the query is answered with an error. */
    static final Duration READ_WAIT = Duration.ofMinutes(2);
    /** Room for the reply's own fields around its documents. */
    private static final int ENVELOPE_ROOM = 16 * 1024;

    private EvaluatedReplies() {
    }

    /**
     * The next step for the query: wait for keys or for the next batch, or the answer (an error
     * reply included) in the reply's place. {@code keys} is this attempt's key lookup.
     */
    static ReplyDecision onReply(Reply reply, EvaluatedQuery q, CollectionKeys keys, Duration kmsWait,
                                 ProxyMetrics metrics) {
        if (q.call != null) {
            CompletableFuture<Frame> read = q.call.toCompletableFuture();
            if (!read.isDone()) {
                return refuse(reply, q, new Refusal(ProxyError.UPSTREAM_UNAVAILABLE, q.ns() + ": the upstream did not "
                        + "answer the proxy's read of the next candidates within " + READ_WAIT.toSeconds() + " s"));
            }
            q.call = null;
            if (read.isCompletedExceptionally()) {
                // the connection is closing; never the candidates in place of an answer
                return refuse(reply, q, new Refusal(ProxyError.UPSTREAM_UNAVAILABLE, q.ns() + ": the connection to "
                        + "the upstream closed while the proxy read the candidates of a query it evaluates"));
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
            metrics.evaluated(q.ns(), false, q.examined());
            return refuse(reply, q, overBudget(q));
        }
        if (q.cursorId != 0) {
            q.call = reply.calls().command(q.getMore());
            return ReplyDecision.awaitUpstream(q.call, READ_WAIT);
        }
        metrics.evaluated(q.ns(), true, q.examined());
        return answer(reply, q);
    }

    private static ReplyDecision answer(Reply reply, EvaluatedQuery q) {
        Frame out = reply.encode(new OpMsg(0, q.answer()));
        if (out.length() > MsgHeader.MAX_MESSAGE_SIZE - ENVELOPE_ROOM) {
            out.release();
            return refuse(reply, q, new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, q.ns() + ": the answer to a query "
                    + "the proxy evaluated is over the 16 MiB a reply may hold (the proxy answers such a query in one "
                    + "batch); narrow it, add a limit or a projection"));
        }
        return ReplyDecision.replace(out);
    }

    private static Refusal overBudget(EvaluatedQuery q) {
        return new Refusal(ProxyError.SCAN_BUDGET_EXCEEDED, q.ns() + ": this query needs the proxy to examine more than "
                + q.budget + " documents (the collection's maxScanDocuments) or "
                + EvaluatedQuery.MAX_CANDIDATE_BYTES / (1024 * 1024) + " MiB of them for conditions, sorts or projections "
                + "on encrypted fields that the server cannot evaluate; add a condition on a plain field or equality on "
                + "a deterministic field to narrow the documents the server returns");
    }

    private static ReplyDecision refuse(Reply reply, EvaluatedQuery q, Refusal r) {
        q.releaseBatch();
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
