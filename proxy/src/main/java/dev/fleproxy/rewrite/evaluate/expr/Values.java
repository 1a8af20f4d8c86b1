package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.BsonOrder;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.math.BigDecimal;
import java.util.List;
import org.bson.BsonBoolean;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/** What the operator families share: the server's nullish, truth, order and integer readings of a Value. */
final class Values {
    private Values() {
    }

    /** Null, undefined or missing: most operators answer null for these. */
    static boolean nullish(BsonValue v) {
        return v == null || v.isNull() || v.getBsonType() == BsonType.UNDEFINED;
    }

    /**
     * The operands' values in order, each checked as it comes (an error of the operator's own);
     * null if one is nullish before any check failed: an operator that answers null for a null
     * operand, as the server evaluates them, one after another.
     */
    static List<BsonValue> operands(Scope scope, List<Expr> args, java.util.function.Consumer<BsonValue> check) {
        List<BsonValue> out = new java.util.ArrayList<>(args.size());
        for (Expr e : args) {
            BsonValue v = e.eval(scope);
            if (nullish(v)) {
                return null;
            }
            check.accept(v);
            out.add(v);
        }
        return out;
    }

    /** Value::coerceToBool: false for false, zeros, null, undefined, missing; true otherwise (NaN too). */
    static boolean truthy(BsonValue v) {
        return dev.fleproxy.rewrite.evaluate.BsonNumbers.trueValue(v); // the filter's and the expression's rule are one
    }

    static BsonBoolean bool(boolean b) {
        return BsonBoolean.valueOf(b);
    }

    static boolean isNumber(BsonValue v) {
        return v != null && (v.isInt32() || v.isInt64() || v.isDouble() || v.isDecimal128());
    }

    /**
     * Value::compare: the BSON order, a missing value below everything but MinKey (as undefined).
     */
    static int compare(BsonValue a, BsonValue b) {
        if (a == null || b == null) {
            int ra = a == null ? 0 : BsonOrder.rank(a.getBsonType());
            int rb = b == null ? 0 : BsonOrder.rank(b.getBsonType());
            return Integer.compare(ra, rb);
        }
        return BsonOrder.compare(a, b);
    }

    /** An integral number that fits an int (a double or decimal without fraction too); else null. */
    static Integer exactInt(BsonValue v) {
        Long l = exactLong(v);
        return l != null && l == l.intValue() ? (Integer) l.intValue() : null;
    }

    static Long exactLong(BsonValue v) {
        if (v == null) {
            return null;
        }
        if (v.isInt32() || v.isInt64()) {
            return v.asNumber().longValue();
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            return Double.isFinite(d) && d == Math.rint(d) && d >= -0x1p63 && d < 0x1p63 ? (Long) (long) d : null;
        }
        if (v.isDecimal128() && v.asDecimal128().getValue().isFinite()) {
            try {
                return v.asDecimal128().getValue().bigDecimalValue().longValueExact();
            } catch (ArithmeticException e) {
                return null;
            }
        }
        return null;
    }

    /** int32 when it fits, else int64 (Value::createIntOrLong). */
    static BsonValue intOrLong(long l) {
        return l == (int) l ? new BsonInt32((int) l) : new BsonInt64(l);
    }

    /** A finite decimal's exact value; a NaN or infinite decimal the proxy does not compute with. */
    static BigDecimal decimal(BsonValue v, String op) {
        if (v.isDecimal128()) {
            Decimal128 d = v.asDecimal128().getValue();
            if (!d.isFinite()) {
                throw new NotEvaluable(op + " of a NaN or infinite decimal");
            }
            return d.bigDecimalValue();
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            if (!Double.isFinite(d)) {
                throw new NotEvaluable(op + " of a NaN or infinite double with a decimal");
            }
            return new BigDecimal(d);
        }
        return BigDecimal.valueOf(v.asNumber().longValue());
    }

    /**
     * The operand as the server's argument list: an array is the arguments, anything else one
     * argument; checked against the counts the server accepts.
     */
    static List<BsonValue> args(String op, BsonValue operand, int min, int max) {
        List<BsonValue> args = operand.isArray() ? operand.asArray().getValues() : List.of(operand);
        if (args.size() < min || args.size() > max) {
            throw new NotEvaluable(op + " takes " + (min == max ? "" + min : min + " to " + (max == Integer.MAX_VALUE
                    ? "any number of" : max)) + " argument(s) (the server refuses " + args.size() + ")");
        }
        return args;
    }

    /** The server's $type name of a value ("missing" for none). */
    static String typeName(BsonValue v) {
        if (v == null) {
            return "missing";
        }
        return switch (v.getBsonType()) {
            case DOUBLE -> "double";
            case STRING -> "string";
            case DOCUMENT -> "object";
            case ARRAY -> "array";
            case BINARY -> "binData";
            case UNDEFINED -> "undefined";
            case OBJECT_ID -> "objectId";
            case BOOLEAN -> "bool";
            case DATE_TIME -> "date";
            case NULL -> "null";
            case REGULAR_EXPRESSION -> "regex";
            case DB_POINTER -> "dbPointer";
            case JAVASCRIPT -> "javascript";
            case SYMBOL -> "symbol";
            case JAVASCRIPT_WITH_SCOPE -> "javascriptWithScope";
            case INT32 -> "int";
            case TIMESTAMP -> "timestamp";
            case INT64 -> "long";
            case DECIMAL128 -> "decimal";
            case MIN_KEY -> "minKey";
            case MAX_KEY -> "maxKey";
            default -> throw new NotEvaluable("a value of BSON type " + v.getBsonType());
        };
    }

    static ExprFailure fail(String op, String why) {
        return new ExprFailure(op + ": " + why);
    }
}
