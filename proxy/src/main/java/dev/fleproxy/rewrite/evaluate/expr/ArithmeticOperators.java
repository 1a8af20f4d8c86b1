package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDateTime;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * $add, $subtract, $multiply, $divide, $mod, $abs, $ceil, $floor, $round, $trunc, $sqrt, $pow,
 * $exp, $ln, $log, $log10 with the server's rules: null or missing in, null out; the result in
 * the widest type of the operands (int32 results widening to int64 on overflow, int64 ones to
 * double); $divide a double (a decimal with a decimal operand); a date plus or minus whole
 * milliseconds. What mongod fails on (a string operand, a division by zero, $ln of 0, …) is an
 * {@link ExprFailure}; what the proxy does not compute exactly like it (a NaN decimal, a
 * fractional number of milliseconds, $exp of a decimal) is NotEvaluable.
 */
final class ArithmeticOperators {
    private ArithmeticOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        return switch (op) {
            case "$add" -> nary(op, c.exprs(Values.args(op, operand, 0, Integer.MAX_VALUE)), ArithmeticOperators::add);
            case "$multiply" -> nary(op, c.exprs(Values.args(op, operand, 0, Integer.MAX_VALUE)),
                    ArithmeticOperators::multiply);
            case "$subtract" -> nary(op, c.exprs(Values.args(op, operand, 2, 2)), v -> subtract(v.get(0), v.get(1)));
            case "$divide" -> nary(op, c.exprs(Values.args(op, operand, 2, 2)), v -> divide(v.get(0), v.get(1)));
            case "$mod" -> nary(op, c.exprs(Values.args(op, operand, 2, 2)), v -> mod(v.get(0), v.get(1)));
            case "$pow" -> nary(op, c.exprs(Values.args(op, operand, 2, 2)), v -> pow(v.get(0), v.get(1)));
            case "$log" -> nary(op, c.exprs(Values.args(op, operand, 2, 2)), v -> log(v.get(0), v.get(1)));
            case "$abs", "$ceil", "$floor", "$sqrt", "$exp", "$ln", "$log10" ->
                    nary(op, c.exprs(Values.args(op, operand, 1, 1)), v -> unary(op, v.get(0)));
            case "$round", "$trunc" -> {
                List<Expr> args = c.exprs(Values.args(op, operand, 1, 2));
                yield scope -> {
                    BsonValue n = args.get(0).eval(scope);
                    BsonValue place = args.size() > 1 ? args.get(1).eval(scope) : new BsonInt32(0);
                    if (Values.nullish(n) || Values.nullish(place)) {
                        return BsonNull.VALUE;
                    }
                    return Rounding.apply(op, n, place);
                };
            }
            default -> null;
        };
    }

    /** The operands in order; the first null or missing one makes the result null, as on the server. */
    private static Expr nary(String op, List<Expr> args, java.util.function.Function<List<BsonValue>, BsonValue> f) {
        return scope -> {
            List<BsonValue> vs = Values.operands(scope, args, v -> {
                if (!Values.isNumber(v) && !(v.isDateTime() && (op.equals("$add") || op.equals("$subtract")))) {
                    throw Values.fail(op, "only numbers" + (op.equals("$add") || op.equals("$subtract")
                            ? " and dates" : "") + " are supported");
                }
            });
            return vs == null ? BsonNull.VALUE : f.apply(vs);
        };
    }

    private static BsonValue add(List<BsonValue> vs) {
        int widest = Numbers.INT;
        BsonValue date = null;
        for (BsonValue v : vs) {
            if (v.isDateTime()) {
                if (date != null) {
                    throw Values.fail("$add", "only one date allowed");
                }
                date = v;
            } else {
                widest = Math.max(widest, Numbers.kind(v));
            }
        }
        if (date != null) {
            long millis = date.asDateTime().getValue();
            for (BsonValue v : vs) {
                if (v != date) {
                    millis = addMillis("$add", millis, v, false);
                }
            }
            return new BsonDateTime(millis);
        }
        if (widest == Numbers.DECIMAL) {
            BigDecimal sum = BigDecimal.ZERO;
            for (BsonValue v : vs) {
                sum = sum.add(Numbers.toDecimal(v, "$add"));
            }
            return Numbers.decimal(sum);
        }
        if (widest == Numbers.DOUBLE) {
            return Numbers.dbl(exactDoubleSum(vs));
        }
        long sum = 0;
        for (BsonValue v : vs) {
            try {
                sum = Math.addExact(sum, v.asNumber().longValue());
            } catch (ArithmeticException overflow) {
                return Numbers.dbl(exactDoubleSum(vs));
            }
        }
        return widest == Numbers.INT ? Values.intOrLong(sum) : new BsonInt64(sum);
    }

    /** The server adds doubles with a double-double summation: the exact sum, rounded once, agrees with it. */
    private static double exactDoubleSum(List<BsonValue> vs) {
        double naive = 0;
        BigDecimal exact = BigDecimal.ZERO;
        boolean finite = true;
        for (BsonValue v : vs) {
            double d = Numbers.toDouble(v);
            naive += d;
            if (Double.isFinite(d)) {
                exact = exact.add(v.isDouble() ? new BigDecimal(d) : BigDecimal.valueOf(v.asNumber().longValue()));
            } else {
                finite = false;
            }
        }
        return finite ? exact.doubleValue() : naive;
    }

    /** A date moved by a whole number of milliseconds (a fraction the server rounds, the proxy does not guess). */
    private static long addMillis(String op, long millis, BsonValue n, boolean subtract) {
        Long whole = Values.exactLong(n);
        if (whole == null) {
            throw new NotEvaluable(op + " of a date and a fractional or out-of-range number");
        }
        try {
            return subtract ? Math.subtractExact(millis, whole) : Math.addExact(millis, whole);
        } catch (ArithmeticException e) {
            throw new NotEvaluable(op + " of a date overflowing");
        }
    }

    private static BsonValue subtract(BsonValue a, BsonValue b) {
        if (a.isDateTime()) {
            if (b.isDateTime()) {
                return new BsonInt64(a.asDateTime().getValue() - b.asDateTime().getValue());
            }
            return new BsonDateTime(addMillis("$subtract", a.asDateTime().getValue(), b, true));
        }
        if (b.isDateTime()) {
            throw Values.fail("$subtract", "can't subtract a date from a number");
        }
        int widest = Math.max(Numbers.kind(a), Numbers.kind(b));
        if (widest == Numbers.DECIMAL) {
            return Numbers.decimal(Numbers.toDecimal(a, "$subtract").subtract(Numbers.toDecimal(b, "$subtract")));
        }
        if (widest == Numbers.DOUBLE) {
            return Numbers.dbl(Numbers.toDouble(a) - Numbers.toDouble(b));
        }
        try {
            long d = Math.subtractExact(a.asNumber().longValue(), b.asNumber().longValue());
            return widest == Numbers.INT ? Values.intOrLong(d) : new BsonInt64(d);
        } catch (ArithmeticException overflow) {
            return Numbers.dbl(Numbers.toDouble(a) - Numbers.toDouble(b));
        }
    }

    private static BsonValue multiply(List<BsonValue> vs) {
        int widest = Numbers.INT;
        for (BsonValue v : vs) {
            widest = Math.max(widest, Numbers.kind(v));
        }
        if (widest == Numbers.DECIMAL) {
            BigDecimal p = BigDecimal.ONE;
            for (BsonValue v : vs) {
                p = p.multiply(Numbers.toDecimal(v, "$multiply"));
            }
            return Numbers.decimal(p);
        }
        double dp = 1;
        for (BsonValue v : vs) {
            dp *= Numbers.toDouble(v); // the server multiplies doubles one by one
        }
        if (widest == Numbers.DOUBLE) {
            return Numbers.dbl(dp);
        }
        long p = 1;
        for (BsonValue v : vs) {
            try {
                p = Math.multiplyExact(p, v.asNumber().longValue());
            } catch (ArithmeticException overflow) {
                return Numbers.dbl(dp);
            }
        }
        return widest == Numbers.INT ? Values.intOrLong(p) : new BsonInt64(p);
    }

    private static BsonValue divide(BsonValue a, BsonValue b) {
        if (a.isDecimal128() || b.isDecimal128()) {
            BigDecimal divisor = Numbers.toDecimal(b, "$divide");
            if (divisor.signum() == 0) {
                throw Values.fail("$divide", "can't $divide by zero");
            }
            return Numbers.decimal(Numbers.toDecimal(a, "$divide").divide(divisor, MathContext.DECIMAL128));
        }
        double divisor = Numbers.toDouble(b);
        if (divisor == 0) {
            throw Values.fail("$divide", "can't $divide by zero");
        }
        return Numbers.dbl(Numbers.toDouble(a) / divisor);
    }

    private static BsonValue mod(BsonValue a, BsonValue b) {
        int widest = Math.max(Numbers.kind(a), Numbers.kind(b));
        if (widest == Numbers.DECIMAL) {
            BigDecimal divisor = Numbers.toDecimal(b, "$mod");
            if (divisor.signum() == 0) {
                throw Values.fail("$mod", "can't $mod by zero");
            }
            return Numbers.decimal(Numbers.toDecimal(a, "$mod").remainder(divisor));
        }
        if (widest == Numbers.DOUBLE) {
            double divisor = Numbers.toDouble(b);
            if (divisor == 0) {
                throw Values.fail("$mod", "can't $mod by zero");
            }
            return Numbers.dbl(Numbers.toDouble(a) % divisor); // fmod: the dividend's sign
        }
        long divisor = b.asNumber().longValue();
        if (divisor == 0) {
            throw Values.fail("$mod", "can't $mod by zero");
        }
        long r = divisor == -1 ? 0 : a.asNumber().longValue() % divisor;
        return widest == Numbers.INT ? new BsonInt32((int) r) : new BsonInt64(r);
    }

    private static BsonValue unary(String op, BsonValue v) {
        int kind = Numbers.kind(v);
        switch (op) {
            case "$abs" -> {
                if (kind == Numbers.INT) {
                    return Values.intOrLong(Math.abs((long) v.asInt32().getValue()));
                }
                if (kind == Numbers.LONG) {
                    if (v.asInt64().getValue() == Long.MIN_VALUE) {
                        throw Values.fail(op, "can't take $abs of long long min");
                    }
                    return new BsonInt64(Math.abs(v.asInt64().getValue()));
                }
                return kind == Numbers.DOUBLE ? Numbers.dbl(Math.abs(v.asDouble().getValue()))
                        : Numbers.decimal(Values.decimal(v, op).abs());
            }
            case "$ceil", "$floor" -> {
                if (kind <= Numbers.LONG) {
                    return v;
                }
                if (kind == Numbers.DOUBLE) {
                    double d = v.asDouble().getValue();
                    return Numbers.dbl(op.equals("$ceil") ? Math.ceil(d) : Math.floor(d));
                }
                BigDecimal d = Values.decimal(v, op);
                return d.scale() <= 0 ? v
                        : Numbers.decimal(d.setScale(0, op.equals("$ceil") ? RoundingMode.CEILING : RoundingMode.FLOOR));
            }
            case "$sqrt" -> {
                if (kind == Numbers.DECIMAL) {
                    BigDecimal d = Values.decimal(v, op);
                    if (d.signum() < 0) {
                        throw Values.fail(op, "$sqrt's argument must be greater than or equal to 0");
                    }
                    throw new NotEvaluable("$sqrt of a decimal"); // Decimal128's rounding of roots is not reproduced
                }
                double d = Numbers.toDouble(v);
                if (d < 0) {
                    throw Values.fail(op, "$sqrt's argument must be greater than or equal to 0");
                }
                return Numbers.dbl(Math.sqrt(d));
            }
            default -> {
                if (kind == Numbers.DECIMAL) {
                    throw new NotEvaluable(op + " of a decimal");
                }
                double d = Numbers.toDouble(v);
                if (op.equals("$exp")) {
                    return Numbers.dbl(Math.exp(d));
                }
                if (!(d > 0) && !Double.isNaN(d)) {
                    throw Values.fail(op, op + "'s argument must be a positive number");
                }
                return Numbers.dbl(op.equals("$ln") ? Math.log(d) : Math.log10(d));
            }
        }
    }

    private static BsonValue log(BsonValue n, BsonValue base) {
        if (n.isDecimal128() || base.isDecimal128()) {
            throw new NotEvaluable("$log of a decimal");
        }
        double x = Numbers.toDouble(n);
        double b = Numbers.toDouble(base);
        if (!(x > 0) && !Double.isNaN(x)) {
            throw Values.fail("$log", "$log's argument must be a positive number");
        }
        if (!(b > 0) && !Double.isNaN(b) || b == 1) {
            throw Values.fail("$log", "$log's base must be a positive number not equal to 1");
        }
        return Numbers.dbl(Math.log(x) / Math.log(b));
    }

    /**
     * Whole powers of whole numbers stay whole when they fit (an int32 from two int32s, else an
     * int64), else a double; 0 to a negative power fails as on the server.
     */
    private static BsonValue pow(BsonValue base, BsonValue exp) {
        if (base.isDecimal128() || exp.isDecimal128()) {
            throw new NotEvaluable("$pow of a decimal");
        }
        double b = Numbers.toDouble(base);
        double e = Numbers.toDouble(exp);
        if (b == 0 && e < 0) {
            throw Values.fail("$pow", "$pow cannot take a base of 0 and a negative exponent");
        }
        boolean integral = (base.isInt32() || base.isInt64()) && (exp.isInt32() || exp.isInt64());
        if (!integral) {
            return Numbers.dbl(Math.pow(b, e));
        }
        long lb = base.asNumber().longValue();
        long le = exp.asNumber().longValue();
        if (le < 0) {
            if (lb == 1 || lb == -1) {
                throw new NotEvaluable("$pow of 1 or -1 to a negative whole power"); // its result type is not reproduced
            }
            return Numbers.dbl(Math.pow(b, e));
        }
        BigInteger r = le > 64 && Math.abs(lb) > 1 ? null : BigInteger.valueOf(lb).pow((int) Math.min(le, 64 + (le & 1)));
        boolean ints = base.isInt32() && exp.isInt32();
        if (r != null && r.bitLength() < 32 && ints) {
            return new BsonInt32(r.intValue());
        }
        if (r != null && r.bitLength() < 64) {
            return new BsonInt64(r.longValue());
        }
        return Numbers.dbl(Math.pow(b, e));
    }
}
