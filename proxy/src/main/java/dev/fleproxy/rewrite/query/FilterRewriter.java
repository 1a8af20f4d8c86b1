package dev.fleproxy.rewrite.query;

import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Query filters on an encrypted collection. Equality on a deterministic field — implicit, $eq,
 * $ne, $in, $nin, also inside $and/$or/$nor — becomes equality on the envelope of the value (the
 * same bytes the field was stored as). $exists works on any encrypted field (an envelope is there
 * or not). Everything else that touches an encrypted field is refused: ranges, regexes, $type,
 * $elemMatch, paths inside an encrypted value, any predicate on a randomized field, equality with
 * null (it would also have to match documents without the field), JavaScript ($where) and
 * $expr/$jsonSchema/$text over encrypted fields. A number equals its other numeric forms, as on the
 * server: 5 asks for the envelopes of int32 5, int64 5, double 5.0 and the decimals 5, 5.0, …
 * ({@link NumericForms}); arrays and documents stay exact on each element's type.
 */
public final class FilterRewriter {
    private static final Set<String> LOGICAL = Set.of("$and", "$or", "$nor");
    private static final Set<String> EQUALITY = Set.of("$eq", "$ne");
    private static final Set<String> MEMBERSHIP = Set.of("$in", "$nin");

    private FilterRewriter() {
    }

    /** The filter with equality values encrypted; the same object if nothing needed rewriting. */
    public static BsonDocument rewrite(BsonDocument filter, CollectionContext ctx) {
        return CopyOnChange.map(filter, (k, v) -> {
            if (LOGICAL.contains(k)) {
                return logical(k, v, ctx);
            }
            if (k.equals("$comment")) {
                return v; // no effect on matching
            }
            if (k.equals("$expr")) {
                Expressions.refuseReferences(v, ctx, "$expr");
                return v;
            }
            if (k.startsWith("$")) {
                if (!k.equals("$where") && !k.equals("$text") && !k.equals("$jsonSchema")) {
                    throw Refusal.command(ctx.ns(), "the query operator " + k + " is not supported on an encrypted collection");
                }
                throw Refusal.command(ctx.ns(), k + " cannot be checked against encrypted fields, so it is refused on an "
                        + "encrypted collection");
            }
            return condition(k, v, ctx);
        });
    }

    /**
     * holder with its query filter {@code field} rewritten; holder itself if nothing changed. What
     * the rewriter returns is compared with the very object it was given: the documents of a
     * parsed message are raw, and a raw document's get() decodes a new object on each call, so
     * comparing with a second get() would rebuild every statement and nothing would pass byte for
     * byte.
     */
    public static BsonDocument rewriteIn(BsonDocument holder, String field, CollectionContext ctx) {
        BsonValue f = holder.get(field);
        if (f == null) {
            return holder;
        }
        if (!f.isDocument()) {
            throw Refusal.command(ctx.ns(), "a " + field + " that is not a document");
        }
        return CopyOnChange.with(holder, field, rewrite(f.asDocument(), ctx), f);
    }

    /**
     * A filter the server keeps and evaluates later (a partial index's partialFilterExpression, a
     * validator). Nothing is rewritten here: an envelope stored in it would stop matching after a
     * key change, and a plaintext value must never reach the server. So only $exists may touch an
     * encrypted field (it carries no value); everything else on one is refused.
     */
    public static void checkStored(BsonDocument filter, CollectionContext ctx, String where) {
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            String k = e.getKey();
            BsonValue v = e.getValue();
            if (LOGICAL.contains(k)) {
                for (BsonValue clause : clauses(k, v, ctx)) {
                    checkStored(clause.asDocument(), ctx, where);
                }
            } else if (k.equals("$expr")) {
                Expressions.refuseReferences(v, ctx, where + " $expr");
            } else if (k.startsWith("$") && !k.equals("$comment")) {
                throw Refusal.command(ctx.ns(), where + " with " + k + " cannot be checked against encrypted fields, so "
                        + "it is refused on an encrypted collection");
            } else if (!k.startsWith("$")) {
                EncryptedPaths.Match m = ctx.paths.classify(k);
                boolean existsOnly = isOperatorDocument(v) && v.asDocument().size() == 1
                        && v.asDocument().containsKey("$exists");
                if (m.kind() == PathKind.PREFIX && !existsOnly) {
                    throw Refusal.command(ctx.ns(), where + " on '" + k + "' would compare a sub-document holding "
                            + "encrypted fields");
                }
                if (m.kind() != PathKind.NONE && m.kind() != PathKind.PREFIX && !existsOnly) {
                    throw Refusal.onField(ctx.ns(), m.rule().path(), "a condition on '" + k + "' in " + where
                            + " (the server would keep it; only $exists is allowed there)");
                }
            }
        }
    }

    /** The clauses of $and/$or/$nor; anything but an array of documents is refused, not passed on unexamined. */
    private static BsonArray clauses(String op, BsonValue v, CollectionContext ctx) {
        if (!v.isArray()) {
            throw Refusal.command(ctx.ns(), op + " must be an array of documents");
        }
        for (BsonValue clause : v.asArray()) {
            if (!clause.isDocument()) {
                throw Refusal.command(ctx.ns(), op + " must be an array of documents");
            }
        }
        return v.asArray();
    }

    private static BsonValue logical(String op, BsonValue v, CollectionContext ctx) {
        return CopyOnChange.map(clauses(op, v, ctx), clause -> rewrite(clause.asDocument(), ctx));
    }

    private static boolean isOperatorDocument(BsonValue v) {
        return v.isDocument() && !v.asDocument().isEmpty() && v.asDocument().getFirstKey().startsWith("$");
    }

    private static BsonValue condition(String path, BsonValue v, CollectionContext ctx) {
        EncryptedPaths.Match m = ctx.paths.classify(path);
        switch (m.kind()) {
            case NONE:
                return v;
            case INSIDE:
                throw Refusal.onField(ctx.ns(), m.rule().path(), "a query on '" + path + "' (inside the encrypted value)");
            case PREFIX:
                if (isOperatorDocument(v) && v.asDocument().size() == 1 && v.asDocument().containsKey("$exists")) {
                    return v;
                }
                throw Refusal.command(ctx.ns(), "a query on '" + path + "' would compare a sub-document holding encrypted "
                        + "fields; query the fields themselves (equality on deterministic ones)");
            default:
                break;
        }
        return equality(v, ctx, m.rule());
    }

    /**
     * A condition on a policy field itself: equality and membership on a deterministic field
     * become equality and membership on envelopes, one for each value's form under each key
     * ({@link #envelopes}); $exists passes. A value with one envelope keeps its operator
     * (implicit, $eq, $ne) as before; one with several becomes $in ($eq, implicit) or $nin ($ne).
     * Two memberships of one kind in a condition ($eq of a number beside $in) become one: $in of
     * the envelopes in both (a stored envelope is one form of one value, so it is in both sets
     * exactly when its value satisfies both), $nin of those in either.
     */
    private static BsonValue equality(BsonValue v, CollectionContext ctx, FieldRule rule) {
        String field = rule.path();
        boolean det = rule.deterministic();
        if (!isOperatorDocument(v)) {
            requireDeterministic(det, ctx, field, "equality");
            List<BsonBinary> envelopes = envelopes(List.of(v), ctx, rule);
            return envelopes.size() == 1 ? envelopes.get(0) : new BsonDocument("$in", new BsonArray(envelopes));
        }
        BsonDocument ops = v.asDocument();
        if (ops.size() == 1 && ops.containsKey("$exists")) {
            return v;
        }
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : ops.entrySet()) {
            String name = e.getKey();
            BsonValue arg = e.getValue();
            if (name.equals("$exists")) {
                out.put(name, arg);
            } else if (EQUALITY.contains(name)) {
                requireDeterministic(det, ctx, field, name);
                List<BsonBinary> envelopes = envelopes(List.of(arg), ctx, rule);
                if (envelopes.size() == 1) {
                    out.put(name, envelopes.get(0));
                } else {
                    merge(out, name.equals("$eq") ? "$in" : "$nin", envelopes);
                }
            } else if (MEMBERSHIP.contains(name)) {
                requireDeterministic(det, ctx, field, name);
                if (!arg.isArray()) {
                    throw Refusal.onField(ctx.ns(), field, name + " without an array");
                }
                merge(out, name, envelopes(arg.asArray().getValues(), ctx, rule));
            } else {
                throw Refusal.onField(ctx.ns(), field, "the query operator " + name);
            }
        }
        return out;
    }

    /** $in (or $nin) of these envelopes added to a condition: intersected with (or added to) one there already. */
    private static void merge(BsonDocument out, String as, List<BsonBinary> envelopes) {
        BsonValue there = out.get(as);
        if (there == null) {
            out.put(as, new BsonArray(envelopes));
            return;
        }
        Set<BsonValue> both = new LinkedHashSet<>(there.asArray().getValues());
        if (as.equals("$in")) {
            both.retainAll(new HashSet<>(envelopes));
        } else {
            both.addAll(envelopes);
        }
        out.put(as, new BsonArray(new ArrayList<>(both)));
    }

    /**
     * The envelopes a deterministic field's equality with these values asks for, each once: every
     * form of each value that MongoDB's equality takes as equal to it ({@link NumericForms}: 1,
     * 1.0, NumberLong(1), the decimal 1, 1.0, …), sealed under the collection's key and, while a
     * key change is under way (previousKeys, `rewrap`), under each previous key too, so a document
     * matches whatever type its number was written as and whether it was rewritten yet or not.
     */
    private static List<BsonBinary> envelopes(List<BsonValue> values, CollectionContext ctx, FieldRule rule) {
        Set<BsonBinary> out = new LinkedHashSet<>();
        boolean keyChange = !ctx.policy.previousKeys().isEmpty();
        for (BsonValue each : values) {
            refuseUnsealable(each, ctx, rule);
            for (BsonValue form : NumericForms.of(each)) {
                if (keyChange) {
                    out.addAll(ctx.encryptForQueryUnderEveryKey(rule, form));
                } else {
                    out.add(ctx.encryptForQuery(rule, form));
                }
            }
        }
        return new ArrayList<>(out);
    }

    private static void requireDeterministic(boolean det, CollectionContext ctx, String field, String what) {
        if (!det) {
            throw Refusal.onField(ctx.ns(), field, what + " (the field is randomized; only fields declared "
                    + "deterministic: true can be compared)");
        }
    }

    /** Values whose envelope could not stand for them: null (also missing documents) and regular expressions. */
    private static void refuseUnsealable(BsonValue v, CollectionContext ctx, FieldRule rule) {
        String field = rule.path();
        if (v.isNull()) {
            throw Refusal.onField(ctx.ns(), field, "equality with null (it would also have to match documents "
                    + "without the field)");
        }
        if (v.isRegularExpression()) {
            throw Refusal.onField(ctx.ns(), field, "a regular expression");
        }
    }
}
