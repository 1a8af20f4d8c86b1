package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.BsonLimits;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.query.FilterRewriter;
import dev.fleproxy.wire.BsonBytes;
import dev.fleproxy.wire.OpMsg;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * update, delete, findAndModify and MongoDB 8.0's bulkWrite on encrypted collections: filters
 * rewritten ({@link FilterRewriter}), updates encrypted or refused ({@link UpdateRewriter}), an
 * upsert's equalities that became membership kept for the document it inserts ({@link UpsertSeedsKept}),
 * arrayFilters and sorts checked. Statements that need no change keep their raw bytes. (insert,
 * the hot path, streams: {@link Inserts}.)
 */
public final class WriteCommands {
    private WriteCommands() {
    }

    /** @param statements the table's entry for update's statements (their sort, hint, constants: {@link Arguments}) */
    public static OpMsg update(OpMsg msg, CollectionContext ctx, Arg statements) {
        return MessageDocuments.map(msg, "updates", ctx.ns(), st -> {
            Arguments.examineFields(st, statements, ctx);
            ArrayFilters.check(st.get("arrayFilters"), st.get("u"), ctx);
            return UpsertSeedsKept.keep(st, rewriteUpdate(FilterRewriter.rewriteIn(st, "q", ctx), "u", ctx), "q", "u", ctx);
        });
    }

    public static OpMsg delete(OpMsg msg, CollectionContext ctx, Arg statements) {
        return MessageDocuments.map(msg, "deletes", ctx.ns(), st -> {
            Arguments.examineFields(st, statements, ctx);
            return FilterRewriter.rewriteIn(st, "q", ctx);
        });
    }

    /** (Its sort and fields were examined with its other arguments.) */
    public static OpMsg findAndModify(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        ArrayFilters.check(body.get("arrayFilters"), body.get("update"), ctx);
        BsonDocument out = UpsertSeedsKept.keep(body,
                rewriteUpdate(FilterRewriter.rewriteIn(body, "query", ctx), "update", ctx), "query", "update", ctx);
        return out == body ? msg : msg.withBody(out);
    }

    /**
     * holder with its update {@code field} (operators, replacement or pipeline) rewritten and
     * size-checked. It compares what the rewriter returns with the very object it gave it, as
     * {@link FilterRewriter#rewriteIn} does, and for the same reason.
     */
    private static BsonDocument rewriteUpdate(BsonDocument holder, String field, CollectionContext ctx) {
        BsonValue u = holder.get(field);
        if (u == null) {
            return holder;
        }
        BsonValue nu = UpdateRewriter.rewrite(u, ctx);
        if (nu != u && nu.isDocument()) {
            RawBsonDocument raw = BsonBytes.toRaw(nu.asDocument());
            int size = raw.getByteBuffer().remaining();
            if (size > BsonLimits.MAX_DOCUMENT) {
                throw new Refusal(ProxyError.TOO_LARGE_AFTER_ENCRYPTION, ctx.ns() + ": an update would be " + size
                        + " bytes once encrypted, over MongoDB's 16 MiB document limit");
            }
            nu = raw;
        }
        return CopyOnChange.with(holder, field, nu, u);
    }

    /**
     * MongoDB 8.0's bulkWrite: operations on any namespaces, listed in nsInfo (contexts by index,
     * null if plain); {@code ops} is the table's entry for its operations.
     */
    public static OpMsg bulkWrite(OpMsg msg, List<CollectionContext> contexts, String named, Arg ops) {
        return MessageDocuments.map(msg, "ops", named, op -> bulkOp(op, contexts, named, ops));
    }

    private static BsonDocument bulkOp(BsonDocument op, List<CollectionContext> contexts, String named, Arg ops) {
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
        Arguments.examineFields(op, ops, ctx);
        return switch (kind) {
            case "insert" -> {
                BsonValue doc = op.get("document");
                yield doc != null && doc.isDocument()
                        ? CopyOnChange.with(op, "document", DocumentEncryptor.encryptDocument(doc.asDocument(), ctx), doc)
                        : op;
            }
            case "update", "delete" -> {
                ArrayFilters.check(op.get("arrayFilters"), op.get("updateMods"), ctx);
                yield UpsertSeedsKept.keep(op, rewriteUpdate(FilterRewriter.rewriteIn(op, "filter", ctx), "updateMods", ctx),
                        "filter", "updateMods", ctx);
            }
            default -> throw Refusal.command(ctx.ns(), "bulkWrite operation " + kind + " is not supported on an "
                    + "encrypted collection");
        };
    }
}
