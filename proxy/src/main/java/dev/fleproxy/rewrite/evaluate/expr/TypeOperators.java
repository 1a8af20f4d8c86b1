package dev.fleproxy.rewrite.evaluate.expr;

import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * $type, $isNumber, and the conversions ($toInt, $toLong, $toDouble, $toDecimal, $toBool,
 * $toString, $convert with onError and onNull): null or missing converts to null (or onNull).
 */
final class TypeOperators {
    private TypeOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        return switch (op) {
            case "$type" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> new BsonString(Values.typeName(arg.eval(scope)));
            }
            case "$isNumber" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> Values.bool(Values.isNumber(arg.eval(scope)));
            }
            case "$toInt", "$toLong", "$toDouble", "$toDecimal", "$toBool", "$toString" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                String type = op.substring(3).toLowerCase(java.util.Locale.ROOT);
                yield scope -> {
                    BsonValue v = arg.eval(scope);
                    return Values.nullish(v) ? BsonNull.VALUE : Conversions.to(type, v);
                };
            }
            case "$convert" -> convert(operand, c);
            default -> null;
        };
    }

    private static Expr convert(BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of("$convert", operand, Set.of("input", "to", "onError", "onNull"), Set.of("input", "to"));
        Expr input = c.expr(d.get("input"));
        // a computed 'to' is not supported: the type must be known before anything is read
        String type = Conversions.target(d.get("to"));
        Expr onError = d.containsKey("onError") ? c.expr(d.get("onError")) : null;
        Expr onNull = d.containsKey("onNull") ? c.expr(d.get("onNull")) : null;
        return scope -> {
            BsonValue v = input.eval(scope);
            if (Values.nullish(v)) {
                return onNull == null ? BsonNull.VALUE : onNull.eval(scope);
            }
            try {
                return Conversions.to(type, v);
            } catch (ExprFailure f) {
                if (onError == null) {
                    throw f;
                }
                return onError.eval(scope);
            }
        };
    }
}
