package dev.fleproxy.rewrite.query;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.ArgKind;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.FieldPaths;
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

    /**
     * Where the arguments are examined: the namespace refusals name, and the policy's paths as the
     * command's documents hold them (a collection's, or {@link dev.fleproxy.rewrite.paths.DatabasePaths}
     * for a command on a whole database).
     */
    public record On(String ns, FieldPaths paths) {
        static On of(CollectionContext ctx) {
            return new On(ctx.ns(), ctx.asPaths());
        }
    }

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
        examine(spec, msg, On.of(ctx), evaluatedByCaller);
    }

    private static void examine(CommandSpec spec, OpMsgView msg, On ctx, Set<String> evaluatedByCaller) {
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
     * A command on a whole database (or on admin) while that database holds encrypted collections,
     * or a command the proxy reads the same way (the handshake): its own element (a name or single
     * value, or what its row's {@code self} says), and every other argument held against its row;
     * arguments the row does not list are examined as its {@code others} says, or refused. The
     * named arguments are left to the caller (a pipeline, explain's command); a database command
     * takes no document sequence.
     */
    public static void examineDatabaseCommand(CommandSpec spec, BsonDocument body, int sequences, On on,
                                              Set<String> byCaller) {
        if (sequences > 0) {
            throw Refusal.command(on.ns(), spec.name() + " with a document sequence (the proxy refuses what it has "
                    + "not examined)");
        }
        boolean first = true;
        BsonDocument others = null;
        for (Map.Entry<String, BsonValue> e : body.entrySet()) {
            String name = e.getKey();
            BsonValue v = e.getValue();
            if (first) {
                first = false;
                if ((v.isDocument() || v.isArray()) && !byCaller.contains(name)) {
                    if (spec.self() == null) {
                        throw Refusal.command(on.ns(), spec.name() + " whose own element is a document or list (the "
                                + "proxy examines only a name or a single value there)");
                    }
                    examineAny(spec.self(), v, on, spec.name());
                }
                continue;
            }
            Arg arg = spec.arg(name);
            if (arg == null && spec.others() != null) {
                if (spec.others().kind() == ArgKind.METADATA_FILTER) {
                    others = others == null ? new BsonDocument() : others;
                    others.append(name, v);
                    continue;
                }
                arg = spec.others();
                if (on.paths().kind(name) != PathKind.NONE) {
                    throw on.paths().refuse(name, "an argument of " + spec.name() + " named like it");
                }
            }
            if (arg == null) {
                throw unknown(on, spec.name(), name);
            }
            if (!byCaller.contains(name)) {
                examineAny(arg, v, on, spec.name());
            }
        }
        if (others != null) {
            MetadataFilters.check(others, spec.others(), on, spec.name());
        }
    }

    /** A value by its kind, for the kinds a database command's row uses; any other kind is refused there. */
    private static void examineAny(Arg arg, BsonValue v, On on, String where) {
        switch (arg.kind()) {
            case DRIVER_METADATA -> {
                if (!v.isDocument()) {
                    throw Refusal.command(on.ns(), "the argument '" + arg.name() + "' of " + where + " must be a document");
                }
                for (String k : v.asDocument().keySet()) {
                    if (arg.field(k) == null) {
                        throw unknown(on, arg.name(), k);
                    }
                }
            }
            case NAMESPACE -> {
                if (!v.isString()) { // $db, checked by the admission gate; getMore's collection
                    throw notAValue(on, where, arg.name());
                }
            }
            case METADATA_FILTER -> MetadataFilters.check(v, arg, on, where);
            case SETTINGS_LIST -> {
                if (!v.isArray()) {
                    throw Refusal.command(on.ns(), "the argument '" + arg.name() + "' of " + where + " must be a list");
                }
                for (BsonValue x : v.asArray()) {
                    if (!x.isDocument()) {
                        throw Refusal.command(on.ns(), "an entry of '" + arg.name() + "' of " + where
                                + " that is not a document");
                    }
                    examineFields(x.asDocument(), arg, on);
                }
            }
            default -> {
                if (!examinedHere(arg.kind())) {
                    throw Refusal.command(on.ns(), "the argument '" + arg.name() + "' of " + where + " where the "
                            + "proxy does not examine it (a command on a whole database with encrypted collections)");
                }
                examineValue(arg, v, on, where);
            }
        }
    }

    /**
     * The fields of one document an argument is made of (an update or delete statement, an index
     * specification, a bulkWrite operation): unknown ones refused, the generic ones examined.
     */
    public static void examineFields(BsonDocument doc, Arg arg, CollectionContext ctx) {
        examineFields(doc, arg, On.of(ctx));
    }

    private static void examineFields(BsonDocument doc, Arg arg, On ctx) {
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            Arg field = arg.field(e.getKey());
            if (field == null) {
                throw unknown(ctx, "an entry of " + arg.name(), e.getKey());
            }
            examineValue(field, e.getValue(), ctx, arg.name());
        }
    }

    /** Settings read in place: each field one the table lists, a single value unless it is configuration. */
    private static void settings(byte[] body, BsonCursor c, Arg arg, On ctx, String where) {
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
            if (field.kind() == ArgKind.SETTINGS) {
                settings(body, f, field, ctx, arg.name()); // $clusterTime's signature, a handshake's options
            } else if (field.kind() != ArgKind.OPTION) {
                // rare (read preference tags, an index's key pattern): decoded only when there
                BsonValue v = new org.bson.RawBsonDocument(body, c.valueStart, c.valueEnd - c.valueStart).get(f.name());
                examineValue(field, v, ctx, arg.name());
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

    static void examineValue(Arg arg, BsonValue v, On ctx, String where) {
        String name = arg.name();
        switch (arg.kind()) {
            case SORT, BOUNDS -> checkSort(v, ctx);
            case PROJECTION -> checkProjection(v, ctx);
            case LET -> Expressions.refuseReferences(v, ctx.paths(), "let");
            case CONSTANTS -> Expressions.refuseReferences(v, ctx.paths(), "update constants");
            case COMMENT -> Expressions.refuseMentions(v, ctx.paths(), "a comment naming it (the server writes "
                    + "comments into its logs)", false);
            case CONFIGURATION -> Expressions.refuseMentions(v, ctx.paths(), "the argument '" + name + "' of " + where
                    + " naming it (configuration never names a policy field)", false);
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
                // the rest is the rewriter's
            }
        }
    }

    /** A sort or index bounds: refused on anything encrypted (it would order ciphertexts). */
    private static void checkSort(BsonValue sort, On ctx) {
        if (sort != null && sort.isDocument()) {
            for (String k : sort.asDocument().keySet()) {
                if (ctx.paths().kind(k) != PathKind.NONE) {
                    throw ctx.paths().refuse(k, "sorting or bounding by '" + k + "' (it would order ciphertexts)");
                }
            }
        }
    }

    /** A projection: inclusion and exclusion of policy fields, nothing computed on them. */
    private static void checkProjection(BsonValue projection, On ctx) {
        if (projection == null || !projection.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : projection.asDocument().entrySet()) {
            String k = e.getKey();
            BsonValue v = e.getValue();
            PathKind kind = ctx.paths().kind(k);
            if (kind == PathKind.NONE) {
                Expressions.refuseReferences(v, ctx.paths(), "the projection");
                continue;
            }
            if (kind == PathKind.INSIDE || k.endsWith(".$")) {
                throw ctx.paths().refuse(k, "projecting '" + k + "' (inside the encrypted value)");
            }
            if (!(v.isNumber() || v.isBoolean() || Expressions.reference(v) != null)) {
                // named by its operator only: its arguments may hold a value of the field
                String op = v.isDocument() && !v.asDocument().isEmpty() ? v.asDocument().getFirstKey() : v.getBsonType()
                        .name().toLowerCase(java.util.Locale.ROOT);
                throw ctx.paths().refuse(k, "the projection '" + k + "': " + op);
            }
            String ref = Expressions.reference(v);
            if (ref != null && !PathSegments.normalize(ref).equals(PathSegments.normalize(k))) {
                // a policy field's name would hold another value, read there as that field
                throw ctx.paths().refuse(k, "the projection '" + k + "': '$" + ref + "' (a policy field "
                        + "returns only its own value)");
            }
        }
    }

    /** An index to use or drop: a name, a list of names, "*", or a key pattern. */
    private static void index(BsonValue v, On ctx, String where, String name) {
        if (v.isString()) {
            return;
        }
        if (v.isArray() && v.asArray().stream().allMatch(BsonValue::isString)) {
            return;
        }
        keyPattern(v, ctx, where, name);
    }

    /** Field names with a direction (a number) or an index type: nothing else, so no value can hide in one. */
    private static void keyPattern(BsonValue v, On ctx, String where, String name) {
        boolean ok = v.isDocument();
        for (BsonValue x : ok ? v.asDocument().values() : java.util.List.<BsonValue>of()) {
            ok &= x.isNumber() || x.isString() && INDEX_TYPES.contains(x.asString().getValue());
        }
        if (!ok) {
            throw Refusal.command(ctx.ns(), "the argument '" + name + "' of " + where + " must be an index name or a "
                    + "key pattern (field names with 1, -1 or an index type)");
        }
    }

    static Refusal unknown(On ctx, String where, String name) {
        return Refusal.command(ctx.ns(), "the argument '" + quoted(name) + "' of " + where + " is not one the proxy "
                + "knows; on an encrypted collection it refuses what it has not examined");
    }

    static Refusal notAValue(On ctx, String where, String name) {
        return Refusal.command(ctx.ns(), "the argument '" + name + "' of " + where + " must be a single value, not a "
                + "document or array");
    }

    /** A client's name, cut short and with control characters replaced, to quote in an error. */
    public static String quoted(String name) {
        return dev.fleproxy.protocol.ErrorReplies.quoted(name);
    }
}
