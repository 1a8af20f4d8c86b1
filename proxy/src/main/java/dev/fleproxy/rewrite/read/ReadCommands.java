package dev.fleproxy.rewrite.read;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.pipeline.PipelineAnalyzer;
import dev.fleproxy.rewrite.pipeline.PipelineSchema;
import dev.fleproxy.rewrite.query.FilterRewriter;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.OpMsg;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * find, count, distinct and aggregate on an encrypted collection: their filters rewritten,
 * their sorts, projections and pipelines checked. (What they return is decrypted by {@link
 * ReplyDecryptor}.)
 */
public final class ReadCommands {
    private ReadCommands() {
    }

    private static final byte[] FILTER = "filter".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    /**
     * True if this find's filter, read in place, shows that it touches no encrypted field: the
     * paths of its filter all lie under plain top-level fields (no operator, nothing encrypted or
     * on the way to it). Such a find (a lookup by _id, say) passes without being decoded; anything
     * else takes the full examination. (Its other arguments were examined already, {@link dev.fleproxy.rewrite.query.Arguments}.)
     */
    public static boolean findTouchesNothingEncrypted(byte[] body, EncryptedPaths paths) {
        BsonCursor c = new BsonCursor(body, 0, body.length);
        if (!c.find(FILTER)) {
            return true;
        }
        if (c.type != BsonCursor.DOCUMENT) {
            return false;
        }
        BsonCursor f = new BsonCursor(body, c.valueStart, c.valueEnd);
        while (f.next()) {
            // a dotted path lies under its first segment: plain if that top-level field is
            int segmentEnd = f.nameStart;
            while (segmentEnd < f.nameEnd && body[segmentEnd] != '.') {
                segmentEnd++;
            }
            if (f.nameEnd == f.nameStart || body[f.nameStart] == '$'
                    || !paths.plainTopLevel(body, f.nameStart, segmentEnd)) {
                return false;
            }
        }
        return true;
    }

    /** (Its sort, projection, bounds and let were examined with its other arguments.) */
    public static OpMsg find(OpMsg msg, CollectionContext ctx) {
        return withFilter(msg, "filter", ctx);
    }

    public static OpMsg count(OpMsg msg, CollectionContext ctx) {
        return withFilter(msg, "query", ctx);
    }

    public static OpMsg distinct(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        if (body.isString("key")) {
            EncryptedPaths.Match m = ctx.paths.classify(body.getString("key").getValue());
            if (m.kind() == PathKind.INSIDE || m.kind() == PathKind.EXACT) {
                // an encrypted array is one envelope to the server, which cannot return its elements
                // as distinct values: the proxy evaluates it (EvaluatedReads), within the scan budget
                throw Refusal.onField(ctx.ns(), m.rule().path(), "distinct of '" + body.getString("key").getValue()
                        + "' (" + (m.kind() == PathKind.INSIDE ? "inside " : "") + "the encrypted value)");
            }
        }
        return withFilter(msg, "query", ctx);
    }

    /** The aggregate with its pipeline checked; the schema then holds the shape of what it returns. */
    public static OpMsg aggregate(OpMsg msg, PipelineSchema schema, Policy p, String db) {
        CollectionContext ctx = schema.ctx;
        BsonDocument body = msg.body();
        if (!body.isArray("pipeline")) {
            throw Refusal.command(ctx.ns(), "aggregate without a pipeline array");
        }
        BsonArray pipe = body.getArray("pipeline");
        BsonDocument out = CopyOnChange.with(body, "pipeline", PipelineAnalyzer.rewriteAggregate(pipe, schema, p, db), pipe);
        return out == body ? msg : msg.withBody(out);
    }

    private static OpMsg withFilter(OpMsg msg, String field, CollectionContext ctx) {
        BsonDocument body = msg.body();
        BsonDocument out = FilterRewriter.rewriteIn(body, field, ctx);
        return out == body ? msg : msg.withBody(out);
    }
}
