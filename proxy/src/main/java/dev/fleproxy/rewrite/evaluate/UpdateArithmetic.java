package dev.fleproxy.rewrite.evaluate;

import java.math.BigDecimal;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNumber;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * $inc, $mul, $min and $max computed on a plaintext value as the server computes them: a missing
 * field becomes the increment ($inc), a zero of the multiplier's type ($mul) or the bound
 * ($min/$max); numbers combine with the server's promotion (int32 to int64 on overflow, any double
 * gives a double, any decimal a decimal; int64 overflow fails); $min and $max compare in BSON
 * order across types. A value or argument of the wrong type fails with the server's code and words.
 */
public final class UpdateArithmetic {
    /** A failure the server would report for the same update (code 14 TypeMismatch, 2 BadValue). */
    public static final class Failure extends RuntimeException {
        public final int code;
        public final String codeName;

        Failure(int code, String codeName, String message) {
            super(message, null, false, false);
            this.code = code;
            this.codeName = codeName;
        }
    }

    private UpdateArithmetic() {
    }

    /** The operators this class computes. */
    public static boolean computes(String operator) {
        return operator.equals("$inc") || operator.equals("$mul") || operator.equals("$min") || operator.equals("$max");
    }

    /** The field's new value; {@code current} null when the document has no such field. */
    public static BsonValue apply(String operator, String path, BsonValue current, BsonValue argument) {
        return switch (operator) {
            case "$inc", "$mul" -> arithmetic(operator, path, current, argument);
            case "$min" -> current == null || BsonOrder.compare(argument, current) < 0 ? argument : current;
            case "$max" -> current == null || BsonOrder.compare(argument, current) > 0 ? argument : current;
            default -> throw new NotEvaluable(operator + " is not computed by the proxy");
        };
    }

    private static BsonValue arithmetic(String operator, String path, BsonValue current, BsonValue argument) {
        String verb = operator.equals("$inc") ? "increment" : "multiply";
        if (!argument.isNumber() && !argument.isDecimal128()) {
            throw new Failure(14, "TypeMismatch", "Cannot " + verb + " with non-numeric argument: {" + path + ": ...}");
        }
        if (current == null) {
            return operator.equals("$inc") ? argument : zeroOf(argument);
        }
        if (!current.isNumber() && !current.isDecimal128()) {
            throw new Failure(14, "TypeMismatch", "Cannot apply " + operator + " to a value of non-numeric type. "
                    + "The field '" + path + "' has non-numeric type " + TypeSet.alias(current.getBsonType()));
        }
        if (current.isDecimal128() || argument.isDecimal128()) {
            try {
                BigDecimal a = decimal(current);
                BigDecimal b = decimal(argument);
                BigDecimal r = operator.equals("$inc") ? a.add(b) : a.multiply(b);
                return new BsonDecimal128(new Decimal128(r.round(java.math.MathContext.DECIMAL128)));
            } catch (ArithmeticException | NumberFormatException notFinite) {
                throw new NotEvaluable(operator + " of a decimal with a NaN or infinite value ('" + path + "')");
            }
        }
        if (current.isDouble() || argument.isDouble()) {
            double a = ((BsonNumber) current).doubleValue();
            double b = ((BsonNumber) argument).doubleValue();
            return new BsonDouble(operator.equals("$inc") ? a + b : a * b);
        }
        long a = ((BsonNumber) current).longValue();
        long b = ((BsonNumber) argument).longValue();
        long r;
        try {
            r = operator.equals("$inc") ? Math.addExact(a, b) : Math.multiplyExact(a, b);
        } catch (ArithmeticException overflow) {
            throw new Failure(2, "BadValue", "Failed to apply " + operator + " operations to current value of '"
                    + path + "': the result overflows a 64-bit integer");
        }
        if (current.isInt32() && argument.isInt32() && r == (int) r) {
            return new BsonInt32((int) r);
        }
        return new BsonInt64(r);
    }

    private static BsonValue zeroOf(BsonValue argument) {
        return switch (argument.getBsonType()) {
            case INT32 -> new BsonInt32(0);
            case INT64 -> new BsonInt64(0);
            case DOUBLE -> new BsonDouble(0);
            // 0 × the multiplier, as the server computes it: a decimal keeps the multiplier's scale (0.0)
            default -> new BsonDecimal128(new Decimal128(BigDecimal.ZERO.multiply(
                    argument.asDecimal128().decimal128Value().bigDecimalValue())));
        };
    }

    private static BigDecimal decimal(BsonValue v) {
        if (v.isDecimal128()) {
            return v.asDecimal128().decimal128Value().bigDecimalValue();
        }
        if (v.isDouble()) {
            return new BigDecimal(v.asDouble().getValue());
        }
        return BigDecimal.valueOf(((BsonNumber) v).longValue());
    }

    /** The value at a dotted path through documents; null if missing; refused through an array. */
    public static BsonValue get(BsonDocument doc, String path) {
        BsonValue v = doc;
        for (String segment : FieldPaths.split(path, "an update")) {
            if (v == null || !v.isDocument()) {
                if (v != null && v.isArray()) {
                    throw new NotEvaluable("an arithmetic update through an array ('" + path + "')");
                }
                return null;
            }
            v = v.asDocument().get(segment);
        }
        return v; // an array: $inc/$mul fail on its type, $min/$max compare it as a value
    }
}
