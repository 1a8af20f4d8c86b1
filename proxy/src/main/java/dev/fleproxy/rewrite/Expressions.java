package dev.fleproxy.rewrite;

import java.util.Map;
import org.bson.BsonValue;

/**
 * Field references in aggregation expressions ("$a.b"; "$$ROOT" and "$$CURRENT" stand for the
 * whole document), and the check that an expression does not compute on encrypted values.
 */
final class Expressions {
    private Expressions() {
    }

    /** The field path a value refers to ("" for the whole document), or null if it is no reference. */
    static String reference(BsonValue v) {
        if (!v.isString()) {
            return null;
        }
        String s = v.asString().getValue();
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
        String ref = reference(expr);
        if (ref != null) {
            EncryptedPaths.Match m = ctx.paths.classify(ref);
            if (m.kind() != EncryptedPaths.Kind.NONE) {
                String field = m.rule() != null ? m.rule().path() : (ref.isEmpty() ? "(the whole document)" : ref);
                throw Refusal.onField(ctx.ns(), field, where + " computing on '$" + ref + "'");
            }
            return;
        }
        if (expr.isDocument()) {
            for (Map.Entry<String, BsonValue> e : expr.asDocument().entrySet()) {
                refuseReferences(e.getValue(), ctx, where);
            }
        } else if (expr.isArray()) {
            for (BsonValue el : expr.asArray()) {
                refuseReferences(el, ctx, where);
            }
        }
    }
}
