package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * $size, $arrayElemAt, $first, $last, $in, $concatArrays, $slice, $reverseArray, $isArray,
 * $filter, $map, $reduce ($$this, $$value) and $range. A null or missing array gives null where
 * the server gives null ($arrayElemAt, $concatArrays, $slice, …) and fails where it fails ($size,
 * $in); any other non-array fails.
 */
final class ArrayOperators {
    /** $range's output bound: the server's is its memory limit; the proxy's scan budget is not meant for more. */
    private static final long MAX_RANGE = 1_000_000;

    private ArrayOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        return switch (op) {
            case "$size" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> new BsonInt32(array(op, arg.eval(scope)).size());
            }
            case "$isArray" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> {
                    BsonValue v = arg.eval(scope);
                    return Values.bool(v != null && v.isArray());
                };
            }
            case "$first", "$last" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> {
                    BsonValue v = arg.eval(scope);
                    if (Values.nullish(v)) {
                        return BsonNull.VALUE;
                    }
                    List<BsonValue> a = array(op, v);
                    return a.isEmpty() ? null : a.get(op.equals("$first") ? 0 : a.size() - 1);
                };
            }
            case "$reverseArray" -> {
                Expr arg = c.expr(Values.args(op, operand, 1, 1).get(0));
                yield scope -> {
                    BsonValue v = arg.eval(scope);
                    if (Values.nullish(v)) {
                        return BsonNull.VALUE;
                    }
                    List<BsonValue> out = new ArrayList<>(array(op, v));
                    java.util.Collections.reverse(out);
                    return new BsonArray(out);
                };
            }
            case "$arrayElemAt" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
                yield scope -> {
                    BsonValue a = args.get(0).eval(scope);
                    BsonValue i = args.get(1).eval(scope);
                    if (Values.nullish(a) || Values.nullish(i)) {
                        return BsonNull.VALUE;
                    }
                    List<BsonValue> list = array(op, a);
                    Integer at = Values.isNumber(i) ? Values.exactInt(i) : null;
                    if (at == null) {
                        throw Values.fail(op, "the index must be a 32-bit whole number");
                    }
                    long k = at < 0 ? (long) list.size() + at : at;
                    return k < 0 || k >= list.size() ? null : list.get((int) k);
                };
            }
            case "$in" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
                yield scope -> {
                    BsonValue v = args.get(0).eval(scope);
                    BsonValue a = args.get(1).eval(scope);
                    if (a == null || !a.isArray()) {
                        throw Values.fail(op, "requires an array as a second argument");
                    }
                    for (BsonValue x : a.asArray()) {
                        if (Values.compare(v, x) == 0) {
                            return Values.bool(true);
                        }
                    }
                    return Values.bool(false);
                };
            }
            case "$concatArrays" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 0, Integer.MAX_VALUE));
                yield scope -> {
                    BsonArray out = new BsonArray();
                    return Values.operands(scope, args, v -> out.addAll(array(op, v))) == null ? BsonNull.VALUE : out;
                };
            }
            case "$slice" -> slice(c.exprs(Values.args(op, operand, 2, 3)));
            case "$filter" -> filter(operand, c);
            case "$map" -> map(operand, c);
            case "$reduce" -> reduce(operand, c);
            case "$range" -> range(c.exprs(Values.args(op, operand, 2, 3)));
            default -> null;
        };
    }

    static List<BsonValue> array(String op, BsonValue v) {
        if (v == null || !v.isArray()) {
            throw Values.fail(op, "the argument must be an array");
        }
        return v.asArray().getValues();
    }

    private static int whole(String op, BsonValue v, String what) {
        Integer i = Values.isNumber(v) ? Values.exactInt(v) : null;
        if (i == null) {
            throw Values.fail(op, what + " must be a 32-bit whole number");
        }
        return i;
    }

    private static Expr slice(List<Expr> args) {
        return scope -> {
            List<BsonValue> vs = Values.operands(scope, args, v -> { });
            if (vs == null) {
                return BsonNull.VALUE;
            }
            List<BsonValue> a = array("$slice", vs.get(0));
            long len = a.size();
            long start;
            long count;
            if (vs.size() == 2) {
                long n = whole("$slice", vs.get(1), "n");
                start = n < 0 ? Math.max(0, len + n) : 0;
                count = n < 0 ? len - start : Math.min(len, n);
            } else {
                long pos = whole("$slice", vs.get(1), "the position");
                long n = whole("$slice", vs.get(2), "n");
                if (n <= 0) {
                    throw Values.fail("$slice", "n must be positive");
                }
                start = pos < 0 ? Math.max(0, len + pos) : Math.min(len, pos);
                count = Math.min(len - start, n);
            }
            return new BsonArray(new ArrayList<>(a.subList((int) start, (int) (start + count))));
        };
    }

    private static Expr filter(BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of("$filter", operand, Set.of("input", "as", "cond", "limit"), Set.of("input", "cond"));
        String as = Fields.as("$filter", d, "this");
        Expr input = c.expr(d.get("input"));
        Expr cond = c.binding(as).expr(d.get("cond"));
        Expr limit = d.containsKey("limit") ? c.expr(d.get("limit")) : null;
        return scope -> {
            BsonValue in = input.eval(scope);
            if (Values.nullish(in)) {
                return BsonNull.VALUE;
            }
            List<BsonValue> a = array("$filter", in);
            long max = Long.MAX_VALUE;
            if (limit != null) {
                BsonValue l = limit.eval(scope);
                if (!Values.nullish(l)) {
                    max = whole("$filter", l, "limit");
                    if (max < 1) {
                        throw Values.fail("$filter", "limit must be greater than 0");
                    }
                }
            }
            BsonArray out = new BsonArray();
            for (BsonValue x : a) {
                if (out.size() >= max) {
                    break;
                }
                if (Values.truthy(cond.eval(scope.with(as, x)))) {
                    out.add(x);
                }
            }
            return out;
        };
    }

    private static Expr map(BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of("$map", operand, Set.of("input", "as", "in"), Set.of("input", "in"));
        String as = Fields.as("$map", d, "this");
        Expr input = c.expr(d.get("input"));
        Expr in = c.binding(as).expr(d.get("in"));
        return scope -> {
            BsonValue v = input.eval(scope);
            if (Values.nullish(v)) {
                return BsonNull.VALUE;
            }
            BsonArray out = new BsonArray();
            for (BsonValue x : array("$map", v)) {
                BsonValue r = in.eval(scope.with(as, x));
                out.add(r == null ? BsonNull.VALUE : r);
            }
            return out;
        };
    }

    private static Expr reduce(BsonValue operand, ExprCompiler c) {
        BsonDocument d = Fields.of("$reduce", operand, Set.of("input", "initialValue", "in"),
                Set.of("input", "initialValue", "in"));
        Expr input = c.expr(d.get("input"));
        Expr initial = c.expr(d.get("initialValue"));
        Expr in = c.binding("this", "value").expr(d.get("in"));
        return scope -> {
            BsonValue v = input.eval(scope);
            if (Values.nullish(v)) {
                return BsonNull.VALUE;
            }
            BsonValue acc = initial.eval(scope);
            for (BsonValue x : array("$reduce", v)) {
                acc = in.eval(scope.with("this", x).with("value", acc));
            }
            return acc;
        };
    }

    private static Expr range(List<Expr> args) {
        return scope -> {
            int start = whole("$range", args.get(0).eval(scope), "the start");
            int end = whole("$range", args.get(1).eval(scope), "the end");
            int step = args.size() > 2 ? whole("$range", args.get(2).eval(scope), "the step") : 1;
            if (step == 0) {
                throw Values.fail("$range", "the step must not be 0");
            }
            BsonArray out = new BsonArray();
            for (long i = start; step > 0 ? i < end : i > end; i += step) {
                if (out.size() >= MAX_RANGE) {
                    throw new NotEvaluable("a $range of more than " + MAX_RANGE + " numbers");
                }
                out.add(new BsonInt32((int) i));
            }
            return out;
        };
    }
}
