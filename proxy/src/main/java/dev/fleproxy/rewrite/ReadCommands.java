package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.OpMsg;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * find, count, distinct and aggregate on an encrypted collection: their filters rewritten,
 * their sorts, projections and pipelines checked. (What they return is decrypted by {@link
 * ReplyDecryptor}.)
 */
final class ReadCommands {
    private ReadCommands() {
    }

    private static final byte[] FILTER = "filter".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    /** The parts of a find that can touch field values besides its filter. */
    private static final java.util.Set<String> FIND_OPTIONS_ON_VALUES = java.util.Set.of("sort", "projection", "min",
            "max", "let");

    /**
     * True if this find's body, read in place, shows that it touches no encrypted field: the paths
     * of its filter all lie under plain top-level fields (no operator, nothing encrypted or on the
     * way to it), it has one filter, and no sort, projection, bounds or let. Such a find (a lookup by
     * _id, say) passes without being decoded; anything else takes the full examination.
     */
    static boolean findTouchesNothingEncrypted(byte[] body, EncryptedPaths paths) {
        BsonCursor c = new BsonCursor(body, 0, body.length);
        boolean filterSeen = false;
        while (c.next()) {
            if (c.nameIs(FILTER)) {
                if (filterSeen || c.type != BsonCursor.DOCUMENT) {
                    return false;
                }
                filterSeen = true;
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
            } else if (c.nameEnd - c.nameStart <= 10 && FIND_OPTIONS_ON_VALUES.contains(c.name())) {
                return false;
            }
        }
        return true;
    }

    static OpMsg find(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        checkSort(body.get("sort"), ctx);
        checkProjection(body.get("projection"), ctx);
        for (String bound : new String[] {"min", "max"}) {
            checkSort(body.get(bound), ctx);
        }
        if (body.containsKey("let")) {
            Expressions.refuseReferences(body.get("let"), ctx, "let");
        }
        return withFilter(msg, "filter", ctx);
    }

    static OpMsg count(OpMsg msg, CollectionContext ctx) {
        return withFilter(msg, "query", ctx);
    }

    static OpMsg distinct(OpMsg msg, CollectionContext ctx) {
        BsonDocument body = msg.body();
        if (body.isString("key")) {
            EncryptedPaths.Match m = ctx.paths.classify(body.getString("key").getValue());
            if (m.kind() == EncryptedPaths.Kind.INSIDE) {
                throw Refusal.onField(ctx.ns(), m.rule().path(), "distinct of '" + body.getString("key").getValue()
                        + "' (inside the encrypted value)");
            }
        }
        return withFilter(msg, "query", ctx);
    }

    /** The aggregate with its pipeline checked; the schema then holds the shape of what it returns. */
    static OpMsg aggregate(OpMsg msg, PipelineSchema schema, Policy p, String db) {
        CollectionContext ctx = schema.ctx;
        BsonDocument body = msg.body();
        if (!body.isArray("pipeline")) {
            throw Refusal.command(ctx.ns(), "aggregate without a pipeline array");
        }
        if (body.containsKey("let")) {
            Expressions.refuseReferences(body.get("let"), ctx, "let");
        }
        BsonArray pipe = body.getArray("pipeline");
        BsonDocument out = CopyOnChange.with(body, "pipeline", PipelineAnalyzer.rewriteAggregate(pipe, schema, p, db), pipe);
        return out == body ? msg : msg.withBody(out);
    }

    private static OpMsg withFilter(OpMsg msg, String field, CollectionContext ctx) {
        BsonDocument body = msg.body();
        BsonDocument out = WriteCommands.rewriteFilter(body, field, ctx);
        return out == body ? msg : msg.withBody(out);
    }

    static void checkSort(BsonValue sort, CollectionContext ctx) {
        if (sort != null && sort.isDocument()) {
            for (String k : sort.asDocument().keySet()) {
                EncryptedPaths.Match m = ctx.paths.classify(k);
                if (m.kind() != EncryptedPaths.Kind.NONE) {
                    throw Refusal.onField(ctx.ns(), m.rule() != null ? m.rule().path() : k,
                            "sorting or bounding by '" + k + "' (it would order ciphertexts)");
                }
            }
        }
    }

    static void checkProjection(BsonValue projection, CollectionContext ctx) {
        if (projection == null || !projection.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : projection.asDocument().entrySet()) {
            String k = e.getKey();
            BsonValue v = e.getValue();
            EncryptedPaths.Match m = ctx.paths.classify(k);
            if (m.kind() == EncryptedPaths.Kind.NONE) {
                Expressions.refuseReferences(v, ctx, "the projection");
                continue;
            }
            String field = m.rule() != null ? m.rule().path() : k;
            if (m.kind() == EncryptedPaths.Kind.INSIDE || k.endsWith(".$")) {
                throw Refusal.onField(ctx.ns(), field, "projecting '" + k + "' (inside the encrypted value)");
            }
            if (!(v.isNumber() || v.isBoolean() || Expressions.reference(v) != null)) {
                // named by its operator only: its arguments may hold a value of the field
                String op = v.isDocument() && !v.asDocument().isEmpty() ? v.asDocument().getFirstKey() : v.getBsonType()
                        .name().toLowerCase(java.util.Locale.ROOT);
                throw Refusal.onField(ctx.ns(), field, "the projection '" + k + "': " + op);
            }
            String ref = Expressions.reference(v);
            if (ref != null && !EncryptedPaths.normalize(ref).equals(EncryptedPaths.normalize(k))) {
                // a policy field's name would hold another value, read there as that field
                throw Refusal.onField(ctx.ns(), field, "the projection '" + k + "': '$" + ref + "' (a policy field "
                        + "returns only its own value)");
            }
        }
    }
}
