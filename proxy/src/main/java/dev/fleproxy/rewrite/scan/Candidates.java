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
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * The candidates of one statement the proxy carries out, read from the server: a find with the
 * server's part of the filter (the documents written already excluded) and a limit of the scan
 * budget and one more, then getMore until the server's cursor is exhausted, each batch asked
 * small enough that its reply stays within 16 MiB (a backend that does not cut batches itself
 * would otherwise send one reply over the wire limit). Each candidate is kept as stored and
 * decrypted. More candidates than the budget refuse the statement (9720012) before anything of it
 * is written, the server's cursor killed. Also the compare-and-swap filter that writes one
 * candidate only while it is as it was read.
 */
final class Candidates {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();
    /** The first batch's size: the server's own default, so a small statement needs one round trip. */
    static final int FIRST_BATCH = 101;
    /** The documents one reply may carry: 16 MiB less room for the reply's own fields. */
    static final int BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024;

    /** One candidate: as the server holds it (envelopes) and decrypted. */
    record Candidate(BsonDocument stored, BsonDocument plain) {
    }

    /** Where the read stands after a reply. */
    enum Progress {
        /** Keys not in memory: fetch them and read the same reply again. */
        KEYS,
        /** The server's cursor holds more: send {@link #getMore()}. */
        MORE,
        /** Every candidate read: {@link #documents()}. */
        DONE,
        /** The server refused, or over the budget: answer {@link #error()}; kill {@link #openCursor()} if not 0. */
        REFUSED
    }

    private final CollectionContext ctx;
    private final int budget;
    /** What every read carries: $db, lsid, $clusterTime ($readPreference for the find only). */
    private final BsonDocument common;
    private final List<Candidate> documents = new ArrayList<>();
    private long cursorId;
    private int largest;
    private BsonDocument error;

    /** The client's transaction's opening fields, for a find that may be the first command sent ({@link TransactionOpening}). */
    private final TransactionOpening opening;

    Candidates(CollectionContext ctx, BsonDocument common, TransactionOpening opening) {
        this.ctx = ctx;
        this.budget = ctx.policy.maxScanDocuments();
        this.common = common;
        this.opening = opening;
    }

    /**
     * The find that begins the read (a read begun before is forgotten), with the statement's hint
     * if it has one (null if not): the server reads with the index the write would use, and
     * refuses a hint it would refuse for the write.
     */
    BsonDocument find(BsonDocument serverFilter, List<BsonValue> written, BsonValue hint) {
        documents.clear();
        cursorId = 0;
        largest = 0;
        error = null;
        BsonDocument filter = written.isEmpty() ? serverFilter : new BsonDocument("$and", new BsonArray(List.of(
                serverFilter, new BsonDocument("_id", new BsonDocument("$nin", new BsonArray(written))))));
        BsonDocument find = new BsonDocument("find", new BsonString(ctx.policy.collection())).append("filter", filter);
        if (hint != null) {
            find.append("hint", hint);
        }
        find.append("limit", new BsonInt32(budget + 1))
                .append("batchSize", new BsonInt32(Math.min(FIRST_BATCH, budget + 1)));
        find.putAll(common);
        return opening.first(find);
    }

    /**
     * The getMore for the next batch: as many as the budget still allows and one more, and no more
     * than the largest document seen so far says fit in one reply.
     */
    BsonDocument getMore() {
        int fit = Math.max(1, BATCH_BYTES / Math.max(1, largest));
        BsonDocument g = new BsonDocument("getMore", new BsonInt64(cursorId))
                .append("collection", new BsonString(ctx.policy.collection()))
                .append("batchSize", new BsonInt32(Math.min(budget + 1 - documents.size(), fit)));
        common.forEach((name, v) -> {
            if (!name.equals("$readPreference")) { // a getMore reads where its cursor is
                g.put(name, v);
            }
        });
        return g;
    }

    /** Kills the server's cursor a refused read left open. */
    BsonDocument killCursor() {
        BsonDocument k = new BsonDocument("killCursors", new BsonString(ctx.policy.collection()))
                .append("cursors", new BsonArray(List.of(new BsonInt64(cursorId))));
        common.forEach((name, v) -> {
            if (!name.equals("$readPreference")) {
                k.put(name, v);
            }
        });
        return k;
    }

    /** Takes one reply (the find's or a getMore's); on KEYS nothing of it was taken. */
    Progress read(OpMsgView reply, ReplyDecryptor decryptor, CollectionKeys keys) {
        BsonDocument body = reply.body();
        if (!body.isNumber("ok") || body.getNumber("ok").doubleValue() != 1.0) {
            error = body; // the server's own error (it names no plaintext)
            cursorId = 0; // a failed getMore's cursor is gone on the server
            return Progress.REFUSED;
        }
        Frame decrypted = decryptor.decrypt(reply, io.netty.buffer.ByteBufAllocator.DEFAULT, keys);
        if (keys.hasPending()) {
            return Progress.KEYS;
        }
        BsonDocument cursor = body.getDocument("cursor");
        String name = cursor.containsKey("firstBatch") ? "firstBatch" : "nextBatch";
        BsonArray stored = cursor.getArray(name);
        BsonArray plain;
        try {
            plain = decrypted == null ? stored : OpMsg.parse(decrypted).body().getDocument("cursor").getArray(name);
        } finally {
            if (decrypted != null) {
                decrypted.release();
            }
        }
        cursorId = cursor.getNumber("id").longValue();
        for (int i = 0; i < stored.size() && documents.size() <= budget; i++) {
            BsonValue s = stored.get(i);
            largest = Math.max(largest, s instanceof RawBsonDocument raw ? raw.getByteBuffer().remaining() : 0);
            documents.add(new Candidate(s.asDocument(), decoded(plain.get(i))));
        }
        if (documents.size() > budget) {
            documents.clear();
            error = ErrorReplies.document(ProxyError.SCAN_BUDGET_EXCEEDED, ctx.ns() + ": this write needs the proxy "
                    + "to examine more than " + budget + " documents (the collection's maxScanDocuments) for "
                    + "conditions on encrypted fields the server cannot evaluate; nothing of this statement was "
                    + "written; add a condition on a plain field or equality on a deterministic field");
            return Progress.REFUSED;
        }
        return cursorId == 0 ? Progress.DONE : Progress.MORE;
    }

    List<Candidate> documents() {
        return documents;
    }

    BsonDocument error() {
        return error;
    }

    /** True if the read was refused for more candidates than the budget (not by the server). */
    boolean overBudget() {
        return error != null && error.isNumber("code")
                && error.getNumber("code").intValue() == ProxyError.SCAN_BUDGET_EXCEEDED.code();
    }

    /**
     * Codes the server answers a whole write command with, not a statement's write error:
     * authorization, interruption (maxTimeMS, a kill, shutdown, a step-down) and a node that is no
     * longer primary. Any other error of a candidate read (a hint naming no index, a filter the
     * server cannot parse) is one the server meets reading for the statement itself, and reports
     * as the statement's write error.
     */
    private static final java.util.Set<Integer> WHOLE_COMMAND = java.util.Set.of(13, 50, 91, 189, 262, 279,
            10107, 11600, 11601, 11602, 13435, 13436);

    /** True for a server error that fails a whole write command on the server (or one labelled for a retry). */
    static boolean failsWholeCommand(BsonDocument error) {
        return error == null || !error.isNumber("code") || error.containsKey("errorLabels")
                || WHOLE_COMMAND.contains(error.getNumber("code").intValue());
    }

    /** The server's cursor a refused read left open, or 0. */
    long openCursor() {
        return cursorId;
    }

    /** Decoded once: a raw document decodes again on every get, and the matching reads each many times. */
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
