package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.BsonOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * $setUnion, $setIntersection, $setDifference, $setEquals, $setIsSubset, $anyElementTrue and
 * $allElementsTrue: arrays as sets of values equal by BSON comparison (1 and 1.0 are one
 * element). The server leaves the order of a set's output unspecified; the proxy gives BSON order.
 */
final class SetOperators {
    private SetOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        return switch (op) {
            case "$setUnion", "$setIntersection" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 0, Integer.MAX_VALUE));
                yield scope -> {
                    List<TreeSet<BsonValue>> sets = new ArrayList<>();
                    if (Values.operands(scope, args, v -> sets.add(set(op, v))) == null) {
                        return BsonNull.VALUE;
                    }
                    TreeSet<BsonValue> acc = null;
                    for (TreeSet<BsonValue> s : sets) {
                        if (acc == null) {
                            acc = s;
                        } else if (op.equals("$setUnion")) {
                            acc.addAll(s);
                        } else {
                            acc.retainAll(s);
                        }
                    }
                    return new BsonArray(acc == null ? List.of() : new ArrayList<>(acc));
                };
            }
            case "$setDifference" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
                yield scope -> {
                    BsonValue a = args.get(0).eval(scope);
                    BsonValue b = args.get(1).eval(scope);
                    if (Values.nullish(a) || Values.nullish(b)) {
                        return BsonNull.VALUE;
                    }
                    TreeSet<BsonValue> s = set(op, a);
                    s.removeAll(set(op, b));
                    return new BsonArray(new ArrayList<>(s));
                };
            }
            case "$setEquals" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, Integer.MAX_VALUE));
                yield scope -> {
                    TreeSet<BsonValue> first = set(op, args.get(0).eval(scope));
                    boolean equal = true;
                    for (int i = 1; i < args.size(); i++) {
                        equal &= first.equals(set(op, args.get(i).eval(scope)));
                    }
                    return Values.bool(equal);
                };
            }
            case "$setIsSubset" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
                yield scope -> {
                    TreeSet<BsonValue> a = set(op, args.get(0).eval(scope));
                    return Values.bool(set(op, args.get(1).eval(scope)).containsAll(a));
                };
            }
            case "$anyElementTrue", "$allElementsTrue" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                boolean any = op.equals("$anyElementTrue");
                yield scope -> {
                    for (BsonValue x : ArrayOperators.array(op, arg.eval(scope))) {
                        if (Values.truthy(x) == any) {
                            return Values.bool(any);
                        }
                    }
                    return Values.bool(!any);
                };
            }
            default -> null;
        };
    }

    private static TreeSet<BsonValue> set(String op, BsonValue v) {
        if (v == null || !v.isArray()) {
            throw Values.fail(op, "the arguments must be arrays");
        }
        TreeSet<BsonValue> s = new TreeSet<>(BsonOrder.COMPARATOR);
        s.addAll(v.asArray().getValues());
        return s;
    }
}
