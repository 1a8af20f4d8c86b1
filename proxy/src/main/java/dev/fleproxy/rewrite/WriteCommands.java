package dev.fleproxy.rewrite;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.wire.BsonBytes;
import dev.fleproxy.wire.OpMsg;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * update, delete, findAndModify and MongoDB 8.0's bulkWrite on encrypted collections: filters
 * rewritten ({@link FilterRewriter}), updates encrypted or refused ({@link UpdateRewriter}),
 * arrayFilters and sorts checked. Statements that need no change keep their raw bytes. (insert,
 * the hot path, streams: {@link Inserts}.)
 */
final class WriteCommands {
    private WriteCommands() {
    }

    static OpMsg update(OpMsg msg, CollectionContext ctx) {
        return MessageDocuments.map(msg, "updates", ctx.ns(), st -> {
            ArrayFilters.check(st.get("arrayFilters"), st.get("u"), ctx);
            ReadCommands.checkSort(st.get("sort"), ctx); // MongoDB 8.0: which document updateOne picks
            BsonDocument out = rewriteUpdate(rewriteFilter(st, "q", ctx), "u", ctx);
            if (st.containsKey("c")) {
                Expressions.refuseReferences(st.get("c"), ctx, "update constants");
            }
            return out;
        });
    }

    static OpMsg delete(OpMsg msg, CollectionContext ctx) {
        return MessageDocuments.map(msg, "deletes", ctx.ns(), st -> rewriteFilter(st, "q", ctx));
    }

    static OpMsg findAndModify(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        ReadCommands.checkSort(body.get("sort"), ctx);
        ReadCommands.checkProjection(body.get("fields"), ctx);
        ArrayFilters.check(body.get("arrayFilters"), body.get("update"), ctx);
        BsonDocument out = rewriteUpdate(rewriteFilter(body, "query", ctx), "update", ctx);
        return out == body ? msg : msg.withBody(out);
    }

    /*
     * The two helpers below compare what the rewriter returns with the very object they gave it:
     * the documents of a parsed message are raw, and a raw document's get() decodes a new object
     * on each call, so comparing with a second get() would rebuild every statement and nothing
     * would pass byte for byte.
     */

    /** holder with its query filter {@code field} rewritten; holder itself if nothing changed. */
    static BsonDocument rewriteFilter(BsonDocument holder, String field, CollectionContext ctx) {
        BsonValue f = holder.get(field);
        if (f == null) {
            return holder;
        }
        if (!f.isDocument()) {
            throw Refusal.command(ctx.ns(), "a " + field + " that is not a document");
        }
        return CopyOnChange.with(holder, field, FilterRewriter.rewrite(f.asDocument(), ctx), f);
    }

    /** holder with its update {@code field} (operators, replacement or pipeline) rewritten and size-checked. */
    private static BsonDocument rewriteUpdate(BsonDocument holder, String field, CollectionContext ctx) {
        BsonValue u = holder.get(field);
        if (u == null) {
            return holder;
        }
        BsonValue nu = UpdateRewriter.rewrite(u, ctx);
        if (nu != u && nu.isDocument()) {
            RawBsonDocument raw = BsonBytes.toRaw(nu.asDocument());
            int size = raw.getByteBuffer().remaining();
            if (size > DocumentEncryptor.MAX_DOCUMENT) {
                throw new Refusal(ProxyError.TOO_LARGE_AFTER_ENCRYPTION, ctx.ns() + ": an update would be " + size
                        + " bytes once encrypted, over MongoDB's 16 MiB document limit");
            }
            nu = raw;
        }
        return CopyOnChange.with(holder, field, nu, u);
    }

    /** The encrypted namespaces a bulkWrite names in its nsInfo, or an empty list. */
    static List<CollectionPolicy> bulkWriteNamespaces(OpMsg msg, Policy p) {
        List<CollectionPolicy> out = new ArrayList<>();
        for (BsonDocument info : MessageDocuments.of(msg, "nsInfo")) {
            CollectionPolicy cp = info.isString("ns") ? p.get(info.getString("ns").getValue()) : null;
            if (cp != null) {
                out.add(cp);
            }
        }
        return out;
    }

    /** MongoDB 8.0's bulkWrite: operations on any namespaces, listed in nsInfo (contexts by index, null if plain). */
    static OpMsg bulkWrite(OpMsg msg, List<CollectionContext> contexts, String named) {
        return MessageDocuments.map(msg, "ops", named, op -> bulkOp(op, contexts, named));
    }

    private static BsonDocument bulkOp(BsonDocument op, List<CollectionContext> contexts, String named) {
        if (op.isEmpty() || !op.get(op.getFirstKey()).isNumber()) {
            // which namespace it writes is unknown: refuse rather than forward a write unexamined
            throw Refusal.command(named, "a bulkWrite operation that does not start with insert, update or delete "
                    + "and a namespace index");
        }
        String kind = op.getFirstKey();
        int index = op.get(kind).asNumber().intValue();
        CollectionContext ctx = index >= 0 && index < contexts.size() ? contexts.get(index) : null;
        if (ctx == null) {
            return op;
        }
        return switch (kind) {
            case "insert" -> {
                BsonValue doc = op.get("document");
                yield doc != null && doc.isDocument()
                        ? CopyOnChange.with(op, "document", DocumentEncryptor.encryptDocument(doc.asDocument(), ctx), doc)
                        : op;
            }
            case "update", "delete" -> {
                ArrayFilters.check(op.get("arrayFilters"), op.get("updateMods"), ctx);
                BsonDocument out = rewriteUpdate(rewriteFilter(op, "filter", ctx), "updateMods", ctx);
                ReadCommands.checkSort(op.get("sort"), ctx);
                yield out;
            }
            default -> throw Refusal.command(ctx.ns(), "bulkWrite operation " + kind + " is not supported on an "
                    + "encrypted collection");
        };
    }
}
