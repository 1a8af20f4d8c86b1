package dev.fleproxy.rewrite.read;

import dev.fleproxy.policy.NamespaceNames;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.evaluate.PipelineEvaluator;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Whether a $project, $addFields/$set, $unset, $unwind or $lookup of an aggregate the proxy
 * evaluates may run on the server, in the candidate read ({@link AggregatePrefix}). The candidates
 * are decrypted by the collection's policy paths ({@code ctx.paths.readShape()}), so a stage the
 * server runs must leave every encrypted value at the path the policy gives it, or drop it; and
 * since the server sees envelopes, no expression may read an encrypted value, nor anything that
 * holds one (a path above it, $$ROOT, $$CURRENT). Fail closed: a stage joins only in the forms
 * read here, with expressions the proxy's own evaluator compiles (so only operators it knows reach
 * the server); anything else ends the prefix, and the proxy runs it (or refuses it) as before.
 */
final class PlainStages {
    /** The only form of $lookup that joins: an equality on one field of each side. */
    private static final Set<String> LOOKUP = Set.of("from", "localField", "foreignField", "as");
    private static final Set<String> UNWIND = Set.of("path", "includeArrayIndex", "preserveNullAndEmptyArrays");
    private static final int MAX_DEPTH = 200;

    private PlainStages() {
    }

    /**
     * True if this stage may run on the server. {@code foreign} gives the context of another
     * collection of the database {@code db} (null: outside the policy), as for an $out's target.
     */
    static boolean joins(String name, BsonValue spec, CollectionContext ctx,
                         Function<String, CollectionContext> foreign, String db) {
        return switch (name) {
            case "$project" -> spec.isDocument() && project(spec.asDocument(), ctx) && compiles(name, spec);
            case "$addFields", "$set" -> spec.isDocument() && addFields(spec.asDocument(), ctx) && compiles(name, spec);
            case "$unset" -> unset(spec, ctx) && compiles(name, spec);
            case "$unwind" -> unwind(spec, ctx);
            case "$lookup" -> spec.isDocument() && lookup(spec.asDocument(), ctx, foreign, db);
            default -> false;
        };
    }

    /**
     * Inclusion or exclusion of a path (kept in place or dropped, even an encrypted one, but never
     * a path inside an encrypted value, which the server sees as one envelope), or a computed
     * field of plain values at a plain path. A nested document of sub-specifications is not read
     * here: the evaluator reads it as an expression, the server as paths.
     */
    private static boolean project(BsonDocument spec, CollectionContext ctx) {
        if (spec.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            BsonValue v = e.getValue();
            if (!fieldPath(e.getKey())) {
                return false;
            }
            if (v.isBoolean() || v.isNumber()) {
                if (kind(e.getKey(), ctx) == PathKind.INSIDE) {
                    return false;
                }
            } else if (!computed(e.getKey(), v, ctx)) {
                return false;
            }
        }
        return true;
    }

    /** Computed fields only, each at a plain path, each of plain values. */
    private static boolean addFields(BsonDocument spec, CollectionContext ctx) {
        if (spec.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            if (!fieldPath(e.getKey()) || !computed(e.getKey(), e.getValue(), ctx)) {
                return false;
            }
        }
        return true;
    }

    /** A computed field: written at a plain path (not an encrypted one, nor above or inside one), reading plain values only. */
    private static boolean computed(String path, BsonValue expression, CollectionContext ctx) {
        if (expression.isDocument() && (expression.asDocument().isEmpty()
                || !expression.asDocument().getFirstKey().startsWith("$"))) {
            return false; // sub-specifications: see project
        }
        return kind(path, ctx) == PathKind.NONE && readsPlainOnly(expression, ctx, 0);
    }

    /** Field names, each dropped where it is: an encrypted path, a path above one, or a plain one. */
    private static boolean unset(BsonValue spec, CollectionContext ctx) {
        List<BsonValue> names = spec.isArray() ? spec.asArray().getValues() : List.of(spec);
        if (names.isEmpty()) {
            return false;
        }
        for (BsonValue n : names) {
            if (!n.isString() || !fieldPath(n.asString().getValue()) || kind(n.asString().getValue(), ctx) == PathKind.INSIDE) {
                return false;
            }
        }
        return true;
    }

    /** "$path" or {path, includeArrayIndex, preserveNullAndEmptyArrays}: the path and the index's field plain. */
    private static boolean unwind(BsonValue spec, CollectionContext ctx) {
        BsonValue path = spec;
        if (spec.isDocument()) {
            BsonDocument d = spec.asDocument();
            if (!UNWIND.containsAll(d.keySet()) || !d.containsKey("path")) {
                return false;
            }
            BsonValue index = d.get("includeArrayIndex");
            if (index != null && !(index.isString() && plainField(index.asString().getValue(), ctx))) {
                return false;
            }
            BsonValue preserve = d.get("preserveNullAndEmptyArrays");
            if (preserve != null && !preserve.isBoolean()) {
                return false;
            }
            path = d.get("path");
        }
        return path.isString() && path.asString().getValue().startsWith("$")
                && plainField(path.asString().getValue().substring(1), ctx);
    }

    /**
     * {from, localField, foreignField, as} only (a let or sub-pipeline would carry this
     * collection's values elsewhere): a collection of the same database outside the policy (its
     * documents are plain, and land at a plain path), joined by a plain field.
     */
    private static boolean lookup(BsonDocument spec, CollectionContext ctx, Function<String, CollectionContext> foreign,
                                  String db) {
        if (!spec.keySet().equals(LOOKUP) || !spec.isString("from") || !spec.isString("localField")
                || !spec.isString("foreignField") || !spec.isString("as")) {
            return false;
        }
        String from = db + "." + spec.getString("from").getValue();
        if (NamespaceNames.namespaceProblem(from) != null) {
            return false;
        }
        try {
            if (foreign.apply(from) != null) {
                return false; // its documents hold envelopes of their own: the proxy would not open them there
            }
        } catch (Refusal notThere) {
            return false;
        }
        return plainField(spec.getString("localField").getValue(), ctx) && fieldPath(spec.getString("foreignField").getValue())
                && plainField(spec.getString("as").getValue(), ctx);
    }

    /**
     * True if every value the expression reads is plain: each "$path" holds nothing encrypted at or
     * under it and lies inside none; no $$ROOT or $$CURRENT (the whole document). Other variables
     * are bound by the expression itself to what it read (the evaluator compiles no others), and
     * a string in a $literal counts as read, to be safe.
     */
    private static boolean readsPlainOnly(BsonValue v, CollectionContext ctx, int depth) {
        if (depth > MAX_DEPTH) {
            return false;
        }
        if (v.isString() && v.asString().getValue().startsWith("$")) {
            String s = v.asString().getValue();
            if (s.startsWith("$$")) {
                int dot = s.indexOf('.');
                String var = dot < 0 ? s.substring(2) : s.substring(2, dot);
                return !var.equals("ROOT") && !var.equals("CURRENT");
            }
            return plainField(s.substring(1), ctx);
        }
        if (v.isDocument()) {
            for (BsonValue x : v.asDocument().values()) {
                if (!readsPlainOnly(x, ctx, depth + 1)) {
                    return false;
                }
            }
        } else if (v.isArray()) {
            for (BsonValue x : v.asArray()) {
                if (!readsPlainOnly(x, ctx, depth + 1)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The stage as the proxy's evaluator reads it: what it cannot compile, the server is not sent. */
    private static boolean compiles(String name, BsonValue spec) {
        try {
            PipelineEvaluator.compile(List.of(new BsonDocument(name, spec)));
            return true;
        } catch (NotEvaluable e) {
            return false;
        }
    }

    private static boolean plainField(String path, CollectionContext ctx) {
        return fieldPath(path) && kind(path, ctx) == PathKind.NONE;
    }

    private static PathKind kind(String path, CollectionContext ctx) {
        return ctx.paths.classify(path).kind();
    }

    /** A dotted field path the server takes as one: no empty segment, none starting with $, no NUL. */
    static boolean fieldPath(String path) {
        if (path.indexOf('\0') >= 0) {
            return false;
        }
        for (String seg : path.split("\\.", -1)) {
            if (seg.isEmpty() || seg.startsWith("$")) {
                return false;
            }
        }
        return true;
    }
}
