package dev.fleproxy.rewrite.query;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.FieldPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Field references in aggregation expressions ("$a.b"; "$$ROOT" and "$$CURRENT" stand for the
 * whole document), and the check that an expression does not compute on encrypted values. Every
 * way an expression can name a field is covered: a path ("$ssn", "$$ROOT.ssn", "$$CURRENT.ssn"),
 * the whole document ("$$ROOT", "$$CURRENT", hence also $let variables bound to it and any
 * input: given to $getField), and a field name given as data to $getField, $setField or
 * $unsetField. A name the proxy cannot read (computed) is refused there: when in doubt, refuse.
 */
public final class Expressions {
    /** Operators that take a field's name as a string rather than as a "$path". */
    private static final Set<String> FIELD_BY_NAME = Set.of("$getField", "$setField", "$unsetField");

    private Expressions() {
    }

    /** The field path a value refers to ("" for the whole document), or null if it is no reference. */
    public static String reference(BsonValue v) {
        if (!v.isString()) {
            return null;
        }
        String s = v.asString().getValue();
        if (s.startsWith("$") && s.indexOf('\0') >= 0) {
            // no field name can hold one (the server refuses it): not a path the proxy can place
            throw new Refusal(dev.fleproxy.protocol.ProxyError.UNSUPPORTED_COMMAND, "a field path that holds a NUL "
                    + "byte (field names cannot)");
        }
        if (s.startsWith("$$")) {
            if (s.equals("$$ROOT") || s.equals("$$CURRENT")) {
                return "";
            }
            if (s.startsWith("$$ROOT.") || s.startsWith("$$CURRENT.")) {
                return s.substring(s.indexOf('.') + 1);
            }
            return null; // other variables ($$NOW, $$this, $$elem …): not document fields
        }
        return s.startsWith("$") && s.length() > 1 ? s.substring(1) : null;
    }

    /** Refuses if anything in the expression refers to an encrypted field, to one inside it, or to a document holding one. */
    static void refuseReferences(BsonValue expr, CollectionContext ctx, String where) {
        refuseReferences(expr, ctx.asPaths(), where);
    }

    public static void refuseReferences(BsonValue expr, FieldPaths paths, String where) {
        String ref = reference(expr);
        if (ref != null) {
            if (paths.kind(ref) != PathKind.NONE) {
                throw paths.refuse(ref.isEmpty() ? "(the whole document)" : ref, where + " computing on '$" + ref + "'");
            }
            return;
        }
        if (expr.isDocument()) {
            for (Map.Entry<String, BsonValue> e : expr.asDocument().entrySet()) {
                if (FIELD_BY_NAME.contains(e.getKey())) {
                    fieldByName(e.getKey(), e.getValue(), paths, where);
                }
                refuseReferences(e.getValue(), paths, where);
            }
        } else if (expr.isArray()) {
            for (BsonValue el : expr.asArray()) {
                refuseReferences(el, paths, where);
            }
        }
    }

    /**
     * Refuses if a name in this value (a key at any depth, or with {@code strings} a string that is
     * a field's name or a reference to one) is a policy field, lies inside one or holds one: for
     * values whose syntax the proxy does not follow (stages it only passes through, comments).
     */
    public static void refuseMentions(BsonValue v, FieldPaths paths, String where, boolean strings) {
        if (v.isString() && strings) {
            String s = v.asString().getValue();
            String path = s.startsWith("$") ? reference(v) : s;
            if (path != null && !path.isEmpty() && paths.kind(path) != PathKind.NONE) {
                throw paths.refuse(path, where);
            }
        } else if (v.isDocument()) {
            for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                if (!e.getKey().startsWith("$") && paths.kind(e.getKey()) != PathKind.NONE) {
                    throw paths.refuse(e.getKey(), where);
                }
                refuseMentions(e.getValue(), paths, where, strings);
            }
        } else if (v.isArray()) {
            for (BsonValue el : v.asArray()) {
                refuseMentions(el, paths, where, strings);
            }
        }
    }

    /**
     * $getField: "ssn" or {field: …, input: …}, $setField/$unsetField {field: …, …}: the field is
     * named as data, so no "$" marks it. A constant name of an encrypted field (or of a document
     * holding one) is refused whatever the input; a name computed at run time is refused always.
     */
    private static void fieldByName(String op, BsonValue arg, FieldPaths paths, String where) {
        BsonValue field = arg.isDocument() ? arg.asDocument().get("field") : arg;
        String name = constantString(field);
        if (name == null) {
            throw paths.refuse("(a field named at run time)", where + " " + op + " with a field name the proxy cannot "
                    + "read before the query runs");
        }
        PathKind kind = paths.kind(name);
        if (name.startsWith("$") && kind == PathKind.PREFIX) {
            kind = PathKind.NONE; // a field literally named "$a", not a positional step towards one
        }
        if (kind != PathKind.NONE) {
            throw paths.refuse(name, where + " " + op + " of '" + name + "'");
        }
    }

    /** A string given as is or as {$literal: "…"}; null for anything computed. */
    private static String constantString(BsonValue v) {
        if (v == null) {
            return null;
        }
        if (v.isString()) {
            return v.asString().getValue().startsWith("$") ? null : v.asString().getValue();
        }
        if (v.isDocument()) {
            BsonDocument d = v.asDocument();
            if (d.size() == 1 && d.containsKey("$literal") && d.get("$literal").isString()) {
                return d.getString("$literal").getValue();
            }
        }
        return null;
    }
}
