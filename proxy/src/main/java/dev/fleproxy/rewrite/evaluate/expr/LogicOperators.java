package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * $and, $or, $not (by truth value: false, 0, null and missing are false), and the conditionals
 * $cond, $ifNull (the first operand neither null nor missing nor undefined, else the last's value)
 * and $switch (the first true case's then; with no true case and no default the server fails).
 * Operands after the deciding one are not evaluated, so they cannot fail, as on the server.
 */
final class LogicOperators {
    private LogicOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        return switch (op) {
            case "$and", "$or" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 0, Integer.MAX_VALUE));
                boolean and = op.equals("$and");
                yield scope -> {
                    for (Expr e : args) {
                        if (Values.truthy(e.eval(scope)) != and) {
                            return Values.bool(!and);
                        }
                    }
                    return Values.bool(and);
                };
            }
            case "$not" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> Values.bool(!Values.truthy(arg.eval(scope)));
            }
            case "$cond" -> cond(operand, c);
            case "$ifNull" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, Integer.MAX_VALUE));
                yield scope -> {
                    for (int i = 0; i < args.size() - 1; i++) {
                        BsonValue v = args.get(i).eval(scope);
                        if (!Values.nullish(v)) {
                            return v;
                        }
                    }
                    return args.get(args.size() - 1).eval(scope);
                };
            }
            case "$switch" -> switchOf(operand, c);
            default -> null;
        };
    }

    private static Expr cond(BsonValue operand, ExprCompiler c) {
        Expr test;
        Expr then;
        Expr otherwise;
        if (operand.isDocument()) {
            BsonDocument d = Fields.of("$cond", operand, Set.of("if", "then", "else"), Set.of("if", "then", "else"));
            test = c.expr(d.get("if"));
            then = c.expr(d.get("then"));
            otherwise = c.expr(d.get("else"));
        } else {
            List<Expr> args = c.exprs(Values.args("$cond", operand, 3, 3));
            test = args.get(0);
            then = args.get(1);
            otherwise = args.get(2);
        }
        return scope -> Values.truthy(test.eval(scope)) ? then.eval(scope) : otherwise.eval(scope);
    }

    private static Expr switchOf(BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of("$switch", operand, Set.of("branches", "default"), Set.of("branches"));
        if (!d.isArray("branches") || d.getArray("branches").isEmpty()) {
            throw new NotEvaluable("$switch requires at least one branch");
        }
        List<Expr[]> branches = new ArrayList<>();
        for (BsonValue b : d.getArray("branches")) {
            BsonDocument bd = Fields.of("$switch branch", b, Set.of("case", "then"), Set.of("case", "then"));
            branches.add(new Expr[] {c.expr(bd.get("case")), c.expr(bd.get("then"))});
        }
        Expr fallback = d.containsKey("default") ? c.expr(d.get("default")) : null;
        return scope -> {
            for (Expr[] b : branches) {
                if (Values.truthy(b[0].eval(scope))) {
                    return b[1].eval(scope);
                }
            }
            if (fallback == null) {
                throw Values.fail("$switch", "could not find a matching branch for an input, and no default was specified");
            }
            return fallback.eval(scope);
        };
    }
}
