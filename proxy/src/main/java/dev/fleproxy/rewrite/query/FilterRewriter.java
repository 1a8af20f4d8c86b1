package dev.fleproxy.rewrite.query;

import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Query filters on an encrypted collection. Equality on a deterministic field — implicit, $eq,
 * $ne, $in, $nin, also inside $and/$or/$nor — becomes equality on the envelope of the value (the
 * same bytes the field was stored as). $exists works on any encrypted field (an envelope is there
 * or not). Everything else that touches an encrypted field is refused: ranges, regexes, $type,
 * $elemMatch, paths inside an encrypted value, any predicate on a randomized field, equality with
 * null (it would also have to match documents without the field), JavaScript ($where) and
 * $expr/$jsonSchema/$text over encrypted fields. Equality is exact on BSON type: 5 (int32) does not
 * match a stored 5.0 (double).
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
        String field = m.rule().path();
        boolean det = m.rule().deterministic();
        if (!ctx.policy.previousKeys().isEmpty()) {
            return duringKeyChange(v, ctx, m.rule());
        }
        if (!isOperatorDocument(v)) {
            requireDeterministic(det, ctx, field, "equality");
            return encryptedValue(v, ctx, m.rule());
        }
        return CopyOnChange.map(v.asDocument(), (name, arg) -> {
            if (name.equals("$exists")) {
                return arg;
            }
            if (EQUALITY.contains(name)) {
                requireDeterministic(det, ctx, field, name);
                return encryptedValue(arg, ctx, m.rule());
            }
            if (MEMBERSHIP.contains(name)) {
                requireDeterministic(det, ctx, field, name);
                if (!arg.isArray()) {
                    throw Refusal.onField(ctx.ns(), field, name + " without an array");
                }
                return CopyOnChange.map(arg.asArray(), each -> encryptedValue(each, ctx, m.rule()));
            }
            throw Refusal.onField(ctx.ns(), field, "the query operator " + name);
        });
    }

    /**
     * While a collection has {@code previousKeys} (a key change or an algorithm migration under way,
     * `rewrap`), a stored value is under any of its keys: equality becomes membership in the
     * value's envelopes under every one of them ($eq → $in, $ne → $nin, $in/$nin over the product),
     * so a document matches whether it was rewritten yet or not.
     */
    private static BsonValue duringKeyChange(BsonValue v, CollectionContext ctx, FieldRule rule) {
        String field = rule.path();
        boolean det = rule.deterministic();
        if (!isOperatorDocument(v)) {
            requireDeterministic(det, ctx, field, "equality");
            return new BsonDocument("$in", envelopesUnderEveryKey(new BsonArray(java.util.List.of(v)), ctx, rule));
        }
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
            String name = e.getKey();
            BsonValue arg = e.getValue();
            String as;
            BsonValue value;
            if (name.equals("$exists")) {
                as = name;
                value = arg;
            } else if (EQUALITY.contains(name) || MEMBERSHIP.contains(name)) {
                requireDeterministic(det, ctx, field, name);
                if (MEMBERSHIP.contains(name) && !arg.isArray()) {
                    throw Refusal.onField(ctx.ns(), field, name + " without an array");
                }
                as = name.equals("$eq") || name.equals("$in") ? "$in" : "$nin";
                value = envelopesUnderEveryKey(arg.isArray() ? arg.asArray() : new BsonArray(java.util.List.of(arg)),
                        ctx, rule);
            } else {
                throw Refusal.onField(ctx.ns(), field, "the query operator " + name);
            }
            if (out.containsKey(as)) {
                throw Refusal.onField(ctx.ns(), field, "both " + as + " and its equality form in one condition while "
                        + "the collection changes keys; put them in an $and");
            }
            out.put(as, value);
        }
        return out;
    }

    private static BsonArray envelopesUnderEveryKey(BsonArray values, CollectionContext ctx, FieldRule rule) {
        BsonArray out = new BsonArray();
        for (BsonValue each : values) {
            encryptedValue(each, ctx, rule); // the same refusals (null, regular expressions)
            out.addAll(ctx.encryptForQueryUnderEveryKey(rule, each));
        }
        return out;
    }

    private static void requireDeterministic(boolean det, CollectionContext ctx, String field, String what) {
        if (!det) {
            throw Refusal.onField(ctx.ns(), field, what + " (the field is randomized; only fields declared "
                    + "deterministic: true can be compared)");
        }
    }

    private static BsonValue encryptedValue(BsonValue v, CollectionContext ctx, FieldRule rule) {
        String field = rule.path();
        if (v.isNull()) {
            throw Refusal.onField(ctx.ns(), field, "equality with null (it would also have to match documents "
                    + "without the field)");
        }
        if (v.isRegularExpression()) {
            throw Refusal.onField(ctx.ns(), field, "a regular expression");
        }
        return ctx.encryptForQuery(rule, v);
    }
}
