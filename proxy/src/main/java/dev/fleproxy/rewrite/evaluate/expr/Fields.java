package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** The named-argument operators' documents ({input, as, in}, {if, then, else}, …), checked as the server does. */
final class Fields {
    private Fields() {
    }

    static BsonDocument of(String op, BsonValue operand, Set<String> allowed, Set<String> required) {
        if (!operand.isDocument()) {
            throw new NotEvaluable(op + " takes a document of named arguments");
        }
        BsonDocument d = operand.asDocument();
        for (String k : d.keySet()) {
            if (!allowed.contains(k)) {
                throw new NotEvaluable(op + " does not take '" + k + "'");
            }
        }
        for (String r : required) {
            if (!d.containsKey(r)) {
                throw new NotEvaluable(op + " requires '" + r + "'");
            }
        }
        return d;
    }

    /** A user variable's name: a lowercase letter or non-ASCII first, then letters, digits and '_'. */
    static String variableName(String op, String name) {
        boolean ok = !name.isEmpty() && (Character.isLowerCase(name.charAt(0)) || name.charAt(0) > 127);
        for (int i = 0; ok && i < name.length(); i++) {
            char c = name.charAt(i);
            ok = Character.isLetterOrDigit(c) || c == '_' || c > 127;
        }
        if (!ok) {
            throw new NotEvaluable(op + ": '" + name + "' is not a valid variable name");
        }
        return name;
    }

    /** A variable named by 'as' (a string), or the default. */
    static String as(String op, BsonDocument d, String fallback) {
        BsonValue as = d.get("as");
        if (as == null) {
            return fallback;
        }
        if (!as.isString()) {
            throw new NotEvaluable(op + "'s 'as' must be a string");
        }
        return variableName(op, as.asString().getValue());
    }
}
