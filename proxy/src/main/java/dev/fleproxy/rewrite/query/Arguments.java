package dev.fleproxy.rewrite.query;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.ArgKind;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.paths.PathSegments;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.Utf8;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Every argument of a command on an encrypted collection, held against the command's entry in
 * {@link dev.fleproxy.protocol.CommandTable}: an argument (or a document sequence) the entry does
 * not name is refused, and the arguments every command examines the same way (sorts, projections,
 * hints, collations, let, comment, options, settings) are examined here. Filters, updates,
 * pipelines and documents are left to the command's rewriter, which calls {@link #examineFields}
 * for the documents its arguments are made of (statements, index specifications).
 */
public final class Arguments {
    /** Index types a key pattern may name instead of a direction. */
    private static final Set<String> INDEX_TYPES = Set.of("hashed", "text", "2d", "2dsphere", "geoHaystack",
            "columnstore");
    /** How much of a name a refusal quotes back. */
    private static final int QUOTED = 64;

    private Arguments() {
    }

    /** The body's arguments after the command's own element, and the message's document sequences. */
    public static void examine(CommandSpec spec, OpMsgView msg, CollectionContext ctx) {
        examine(spec, msg, ctx, Set.of());
    }

    /**
     * As {@link #examine(CommandSpec, OpMsgView, CollectionContext)}, but the values of the named
     * arguments are left to the caller (a query the proxy evaluates itself reads its sort and
     * projection on plaintext); they must still be arguments the command takes.
     */
    public static void examine(CommandSpec spec, OpMsgView msg, CollectionContext ctx, Set<String> evaluatedByCaller) {
        byte[] body = msg.bodyBytes();
        BsonCursor c = new BsonCursor(body, 0, body.length);
        boolean first = true;
        while (c.next()) {
            if (first) {
                first = false; // the command's own element, read already
                continue;
            }
            if (!Utf8.isValid(body, c.nameStart, c.nameEnd)) {
                throw Refusal.command(ctx.ns(), "an argument of " + spec.name() + " whose name is not valid UTF-8");
            }
            String name = c.name();
            Arg arg = spec.arg(name);
            if (arg == null) {
                throw unknown(ctx, spec.name(), name);
            }
            if (arg.kind() == ArgKind.OPTION) {
                if (c.type == BsonCursor.DOCUMENT || c.type == BsonCursor.ARRAY) {
                    throw notAValue(ctx, spec.name(), name);
                }
            } else if (arg.kind() == ArgKind.SETTINGS || arg.kind() == ArgKind.COLLATION) {
                settings(body, c, arg, ctx, spec.name()); // in place: lsid, $clusterTime, … come with every command
            } else if (examinedHere(arg.kind()) && !evaluatedByCaller.contains(name)) {
                examineValue(arg, msg.body().get(name), ctx, spec.name());
            }
        }
        for (int i = 0; i < msg.sequenceCount(); i++) {
            String id = msg.sequenceIdentifier(i);
            Arg arg = spec.arg(id);
            if (arg == null || !arg.sequence()) {
                throw Refusal.command(ctx.ns(), "a document sequence '" + quoted(id) + "' that " + spec.name()
                        + " does not take (the proxy refuses what it has not examined)");
            }
        }
    }

    /**
     * The fields of one document an argument is made of (an update or delete statement, an index
     * specification, a bulkWrite operation): unknown ones refused, the generic ones examined.
     */
    public static void examineFields(BsonDocument doc, Arg arg, CollectionContext ctx) {
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            Arg field = arg.field(e.getKey());
            if (field == null) {
                throw unknown(ctx, "an entry of " + arg.name(), e.getKey());
            }
            examineValue(field, e.getValue(), ctx, arg.name());
        }
    }

    /** Settings read in place: each field one the table lists, a single value unless it is configuration. */
    private static void settings(byte[] body, BsonCursor c, Arg arg, CollectionContext ctx, String where) {
        if (c.type != BsonCursor.DOCUMENT) {
            throw Refusal.command(ctx.ns(), "the argument '" + arg.name() + "' of " + where + " must be a document");
        }
        BsonCursor f = new BsonCursor(body, c.valueStart, c.valueEnd);
        while (f.next()) {
            Arg field = arg.field(f.name());
            if (field == null) {
                throw unknown(ctx, arg.name(), f.name());
            }
            if (field.kind() == ArgKind.OPTION && (f.type == BsonCursor.DOCUMENT || f.type == BsonCursor.ARRAY)) {
                throw notAValue(ctx, arg.name(), field.name());
            }
        }
    }

    /** Kinds examined the same way for every command; the others are their rewriter's. */
    private static boolean examinedHere(ArgKind kind) {
        return switch (kind) {
            case SORT, BOUNDS, PROJECTION, INDEX, KEY_PATTERN, COLLATION, LET, CONSTANTS, COMMENT, OPTION, NAMES,
                    SETTINGS, CONFIGURATION -> true;
            default -> false;
        };
    }

    private static void examineValue(Arg arg, BsonValue v, CollectionContext ctx, String where) {
        String name = arg.name();
        switch (arg.kind()) {
            case SORT, BOUNDS -> checkSort(v, ctx);
            case PROJECTION -> checkProjection(v, ctx);
            case LET -> Expressions.refuseReferences(v, ctx, "let");
            case CONSTANTS -> Expressions.refuseReferences(v, ctx, "update constants");
            case COMMENT -> Expressions.refuseMentions(v, ctx.asPaths(), "a comment naming it (the server writes "
                    + "comments into its logs)", false);
            case OPTION -> {
                if (v.isDocument() || v.isArray()) {
                    throw notAValue(ctx, where, name);
                }
            }
            case NAMES -> {
                if (!v.isArray() || !v.asArray().stream().allMatch(BsonValue::isString)) {
                    throw Refusal.command(ctx.ns(), "the argument '" + name + "' of " + where + " must be a list of names");
                }
            }
            case INDEX -> index(v, ctx, where, name);
            case KEY_PATTERN -> keyPattern(v, ctx, where, name);
            case COLLATION, SETTINGS -> {
                if (!v.isDocument()) {
                    throw Refusal.command(ctx.ns(), "the argument '" + name + "' of " + where + " must be a document");
                }
                examineFields(v.asDocument(), arg, ctx);
            }
            default -> {
                // CONFIGURATION is forwarded as it is; the rest is the rewriter's
            }
        }
    }

    /** A sort or index bounds: refused on anything encrypted (it would order ciphertexts). */
    private static void checkSort(BsonValue sort, CollectionContext ctx) {
        if (sort != null && sort.isDocument()) {
            for (String k : sort.asDocument().keySet()) {
                EncryptedPaths.Match m = ctx.paths.classify(k);
                if (m.kind() != PathKind.NONE) {
                    throw Refusal.onField(ctx.ns(), m.rule() != null ? m.rule().path() : k,
                            "sorting or bounding by '" + k + "' (it would order ciphertexts)");
                }
            }
        }
    }

    /** A projection: inclusion and exclusion of policy fields, nothing computed on them. */
    private static void checkProjection(BsonValue projection, CollectionContext ctx) {
        if (projection == null || !projection.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : projection.asDocument().entrySet()) {
            String k = e.getKey();
            BsonValue v = e.getValue();
            EncryptedPaths.Match m = ctx.paths.classify(k);
            if (m.kind() == PathKind.NONE) {
                Expressions.refuseReferences(v, ctx, "the projection");
                continue;
            }
            String field = m.rule() != null ? m.rule().path() : k;
            if (m.kind() == PathKind.INSIDE || k.endsWith(".$")) {
                throw Refusal.onField(ctx.ns(), field, "projecting '" + k + "' (inside the encrypted value)");
            }
            if (!(v.isNumber() || v.isBoolean() || Expressions.reference(v) != null)) {
                // named by its operator only: its arguments may hold a value of the field
                String op = v.isDocument() && !v.asDocument().isEmpty() ? v.asDocument().getFirstKey() : v.getBsonType()
                        .name().toLowerCase(java.util.Locale.ROOT);
                throw Refusal.onField(ctx.ns(), field, "the projection '" + k + "': " + op);
            }
            String ref = Expressions.reference(v);
            if (ref != null && !PathSegments.normalize(ref).equals(PathSegments.normalize(k))) {
                // a policy field's name would hold another value, read there as that field
                throw Refusal.onField(ctx.ns(), field, "the projection '" + k + "': '$" + ref + "' (a policy field "
                        + "returns only its own value)");
            }
        }
    }

    /** An index to use or drop: a name, a list of names, "*", or a key pattern. */
    private static void index(BsonValue v, CollectionContext ctx, String where, String name) {
        if (v.isString()) {
            return;
        }
        if (v.isArray() && v.asArray().stream().allMatch(BsonValue::isString)) {
            return;
        }
        keyPattern(v, ctx, where, name);
    }

    /** Field names with a direction (a number) or an index type: nothing else, so no value can hide in one. */
    private static void keyPattern(BsonValue v, CollectionContext ctx, String where, String name) {
        boolean ok = v.isDocument();
        for (BsonValue x : ok ? v.asDocument().values() : java.util.List.<BsonValue>of()) {
            ok &= x.isNumber() || x.isString() && INDEX_TYPES.contains(x.asString().getValue());
        }
        if (!ok) {
            throw Refusal.command(ctx.ns(), "the argument '" + name + "' of " + where + " must be an index name or a "
                    + "key pattern (field names with 1, -1 or an index type)");
        }
    }

    private static Refusal unknown(CollectionContext ctx, String where, String name) {
        return Refusal.command(ctx.ns(), "the argument '" + quoted(name) + "' of " + where + " is not one the proxy "
                + "knows; on an encrypted collection it refuses what it has not examined");
    }

    private static Refusal notAValue(CollectionContext ctx, String where, String name) {
        return Refusal.command(ctx.ns(), "the argument '" + name + "' of " + where + " must be a single value, not a "
                + "document or array");
    }

    /** A client's name, cut short and with control characters replaced, to quote in an error. */
    public static String quoted(String name) {
        StringBuilder b = new StringBuilder(Math.min(name.length(), QUOTED) + 1);
        for (int i = 0; i < name.length() && i < QUOTED; i++) {
            char ch = name.charAt(i);
            b.append(Character.isISOControl(ch) ? '?' : ch);
        }
        return name.length() > QUOTED ? b.append('…').toString() : b.toString();
    }
}
