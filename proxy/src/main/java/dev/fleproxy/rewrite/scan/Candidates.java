package dev.fleproxy.rewrite.scan;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.read.ReplyDecryptor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * The candidates of a write the proxy carries out: the find that asks the server for them (its
 * part of the filter, the documents written already excluded, the scan budget and one more, in
 * one batch), each candidate as stored and decrypted, and the compare-and-swap filter that writes
 * one only while it is as it was read.
 *
 * @param error      the reply to answer with instead (the server's error, or over the budget), or null
 * @param openCursor the server's cursor left open by a refused read (killed by the caller), or 0
 */
record Candidates(List<Candidate> documents, BsonDocument error, long openCursor) {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    /** One candidate: as the server holds it (envelopes) and decrypted. */
    record Candidate(BsonDocument stored, BsonDocument plain) {
    }

    static BsonDocument killCursor(CollectionContext ctx, long id, BsonDocument common) {
        BsonDocument k = new BsonDocument("killCursors", new BsonString(ctx.policy.collection()))
                .append("cursors", new BsonArray(List.of(new org.bson.BsonInt64(id))));
        k.putAll(common);
        return k;
    }

    static BsonDocument find(CollectionContext ctx, BsonDocument serverFilter, List<BsonValue> written,
                             BsonDocument common) {
        int budget = ctx.policy.maxScanDocuments();
        BsonDocument filter = written.isEmpty() ? serverFilter : new BsonDocument("$and", new BsonArray(List.of(
                serverFilter, new BsonDocument("_id", new BsonDocument("$nin", new BsonArray(written))))));
        BsonDocument find = new BsonDocument("find", new BsonString(ctx.policy.collection())).append("filter", filter)
                .append("limit", new BsonInt32(budget + 1)).append("batchSize", new BsonInt32(budget + 1));
        find.putAll(common);
        return find;
    }

    /**
     * Reads the find's reply: null documents and keys pending when they are not all in memory. A
     * reply that did not hold every candidate (over the budget, or cut at 16 MiB) is an error:
     * the write is refused whole, before anything is written for this statement.
     */
    static Candidates read(OpMsgView reply, ReplyDecryptor decryptor, CollectionKeys keys, int budget) {
        BsonDocument body = reply.body();
        if (!body.isNumber("ok") || body.getNumber("ok").doubleValue() != 1.0) {
            return new Candidates(List.of(), body, 0);
        }
        Frame decrypted = decryptor.decrypt(reply, io.netty.buffer.ByteBufAllocator.DEFAULT, keys);
        if (keys.hasPending()) {
            return new Candidates(List.of(), null, 0);
        }
        BsonArray stored = body.getDocument("cursor").getArray("firstBatch");
        BsonArray plain;
        try {
            plain = decrypted == null ? stored : OpMsg.parse(decrypted).body().getDocument("cursor").getArray("firstBatch");
        } finally {
            if (decrypted != null) {
                decrypted.release();
            }
        }
        long cursorId = body.getDocument("cursor").getNumber("id").longValue();
        if (stored.size() > budget || cursorId != 0) {
            return new Candidates(List.of(), ErrorReplies.document(ProxyError.SCAN_BUDGET_EXCEEDED, "this write needs "
                    + "the proxy to examine more than " + budget + " documents (the collection's maxScanDocuments), or "
                    + "more than one reply holds, for conditions on encrypted fields the server cannot evaluate; "
                    + "nothing of this statement was written; add a condition on a plain field or equality on a "
                    + "deterministic field"), cursorId);
        }
        List<Candidate> out = new ArrayList<>(stored.size());
        for (int i = 0; i < stored.size(); i++) {
            out.add(new Candidate(decoded(stored.get(i)), decoded(plain.get(i))));
        }
        return new Candidates(out, null, 0);
    }

    private static BsonDocument decoded(BsonValue v) {
        return v instanceof RawBsonDocument raw ? raw.decode(CODEC) : v.asDocument();
    }

    /**
     * Matches the candidate only while it is as it was read: its _id, the server's part of the
     * statement's filter, every top-level field equal to what was read, and the fields the update
     * computes and that were absent still absent.
     */
    static BsonDocument guard(BsonDocument stored, BsonDocument serverFilter, List<String> computedTopLevel) {
        List<BsonValue> all = new ArrayList<>();
        all.add(new BsonDocument("_id", stored.get("_id")));
        if (!serverFilter.isEmpty()) {
            all.add(serverFilter);
        }
        for (Map.Entry<String, BsonValue> e : stored.entrySet()) {
            if (!e.getKey().equals("_id")) {
                all.add(new BsonDocument(e.getKey(), new BsonDocument("$eq", e.getValue())));
            }
        }
        for (String top : computedTopLevel) {
            if (!stored.containsKey(top)) {
                all.add(new BsonDocument(top, new BsonDocument("$exists", org.bson.BsonBoolean.FALSE)));
            }
        }
        return new BsonDocument("$and", new BsonArray(all));
    }
}
