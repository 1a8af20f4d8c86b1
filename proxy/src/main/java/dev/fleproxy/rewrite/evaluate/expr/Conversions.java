package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.regex.Pattern;
import org.bson.BsonBoolean;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * $convert's table (and $toInt, $toLong, $toDouble, $toDecimal, $toBool, $toString): what the
 * server fails to convert is an {@link ExprFailure} (onError catches it); what the proxy does not
 * reproduce exactly (a double's text, a string in a form other than plain digits) is NotEvaluable,
 * which onError does not catch.
 */
final class Conversions {
    private static final Pattern WHOLE = Pattern.compile("-?[0-9]{1,19}");
    private static final Pattern PLAIN = Pattern.compile("-?[0-9]{1,30}(\\.[0-9]{1,30})?");
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    private Conversions() {
    }

    /** The $convert 'to' names and their numeric codes. */
    static String target(BsonValue to) {
        if (to.isString()) {
            String s = to.asString().getValue();
            if (java.util.Set.of("int", "long", "double", "decimal", "bool", "string").contains(s)) {
                return s;
            }
        } else if (Values.isNumber(to)) {
            Integer code = Values.exactInt(to);
            if (code != null) {
                switch (code) {
                    case 16: return "int";
                    case 18: return "long";
                    case 1: return "double";
                    case 19: return "decimal";
                    case 8: return "bool";
                    case 2: return "string";
                    default: break;
                }
            }
        }
        throw new NotEvaluable("$convert to a type other than int, long, double, decimal, bool or string");
    }

    static BsonValue to(String type, BsonValue v) {
        return switch (type) {
            case "int" -> {
                Long l = whole(v, "int");
                if (l != (int) (long) l) {
                    throw Values.fail("$convert", "conversion would overflow an int");
                }
                yield new BsonInt32((int) (long) l);
            }
            case "long" -> v.isDateTime() ? new BsonInt64(v.asDateTime().getValue()) : new BsonInt64(whole(v, "long"));
            case "double" -> new BsonDouble(toDouble(v));
            case "decimal" -> toDecimal(v);
            case "bool" -> toBool(v);
            default -> new BsonString(toText(v));
        };
    }

    /** A whole number: bools 0/1, numbers truncated toward zero (NaN and out of range fail), plain digit strings. */
    private static Long whole(BsonValue v, String type) {
        if (v.isBoolean()) {
            return v.asBoolean().getValue() ? 1L : 0L;
        }
        if (v.isInt32() || v.isInt64()) {
            return v.asNumber().longValue();
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            if (!Double.isFinite(d) || d >= 0x1p63 || d < -0x1p63) {
                throw Values.fail("$convert", "can't convert a NaN, infinite or out-of-range double to " + type);
            }
            return (long) d;
        }
        if (v.isDecimal128()) {
            if (!v.asDecimal128().getValue().isFinite()) {
                throw Values.fail("$convert", "can't convert a NaN or infinite decimal to " + type);
            }
            BigDecimal t = v.asDecimal128().getValue().bigDecimalValue().setScale(0, RoundingMode.DOWN);
            try {
                return t.longValueExact();
            } catch (ArithmeticException e) {
                throw Values.fail("$convert", "conversion would overflow a " + type);
            }
        }
        if (v.isString()) {
            String s = v.asString().getValue();
            if (WHOLE.matcher(s).matches()) {
                try {
                    return Long.parseLong(s);
                } catch (NumberFormatException e) {
                    throw Values.fail("$convert", "string out of range of a " + type);
                }
            }
            throw new NotEvaluable("$convert of a string that is not plain digits to " + type);
        }
        throw Values.fail("$convert", "unsupported conversion from " + Values.typeName(v) + " to " + type);
    }

    private static double toDouble(BsonValue v) {
        if (v.isBoolean()) {
            return v.asBoolean().getValue() ? 1 : 0;
        }
        if (v.isDateTime()) {
            return v.asDateTime().getValue();
        }
        if (v.isInt32() || v.isInt64() || v.isDouble()) {
            return v.asNumber().doubleValue();
        }
        if (v.isDecimal128()) {
            if (!v.asDecimal128().getValue().isFinite()) {
                throw new NotEvaluable("$convert of a NaN or infinite decimal to double");
            }
            return v.asDecimal128().getValue().bigDecimalValue().doubleValue();
        }
        if (v.isString() && PLAIN.matcher(v.asString().getValue()).matches()) {
            return Double.parseDouble(v.asString().getValue());
        }
        if (v.isString()) {
            throw new NotEvaluable("$convert of a string that is not a plain decimal number to double");
        }
        throw Values.fail("$convert", "unsupported conversion from " + Values.typeName(v) + " to double");
    }

    /** A double becomes a decimal of 15 significant digits (Decimal128's kRoundTo15Digits), trailing zeros kept. */
    private static BsonValue toDecimal(BsonValue v) {
        if (v.isDecimal128()) {
            return v;
        }
        if (v.isBoolean()) {
            return Numbers.decimal(BigDecimal.valueOf(v.asBoolean().getValue() ? 1 : 0));
        }
        if (v.isInt32() || v.isInt64()) {
            return Numbers.decimal(BigDecimal.valueOf(v.asNumber().longValue()));
        }
        if (v.isDateTime()) {
            return Numbers.decimal(BigDecimal.valueOf(v.asDateTime().getValue()));
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            if (!Double.isFinite(d) || d == 0) {
                throw new NotEvaluable("$convert of a zero, NaN or infinite double to decimal");
            }
            BigDecimal r = new BigDecimal(d).round(new MathContext(15, RoundingMode.HALF_EVEN));
            return Numbers.decimal(r.setScale(r.scale() + 15 - r.precision()));
        }
        if (v.isString() && PLAIN.matcher(v.asString().getValue()).matches()) {
            return Numbers.decimal(new BigDecimal(v.asString().getValue()));
        }
        if (v.isString()) {
            throw new NotEvaluable("$convert of a string that is not a plain decimal number to decimal");
        }
        throw Values.fail("$convert", "unsupported conversion from " + Values.typeName(v) + " to decimal");
    }

    private static BsonValue toBool(BsonValue v) {
        if (v.isBoolean() || Values.isNumber(v)) {
            return BsonBoolean.valueOf(Values.truthy(v));
        }
        if (v.isString() || v.isDateTime() || v.isObjectId()) {
            return BsonBoolean.TRUE;
        }
        throw new NotEvaluable("$convert of a " + Values.typeName(v) + " to bool"); // server versions differ here
    }

    private static String toText(BsonValue v) {
        if (v.isString()) {
            return v.asString().getValue();
        }
        if (v.isBoolean()) {
            return Boolean.toString(v.asBoolean().getValue());
        }
        if (v.isInt32() || v.isInt64()) {
            return Long.toString(v.asNumber().longValue());
        }
        if (v.isDecimal128()) {
            return v.asDecimal128().getValue().toString();
        }
        if (v.isObjectId()) {
            return v.asObjectId().getValue().toHexString();
        }
        if (v.isDateTime()) {
            long ms = v.asDateTime().getValue();
            if (ms < -62167219200000L || ms > 253402300799999L) {
                throw new NotEvaluable("$convert of a date outside years 0–9999 to string");
            }
            return ISO.format(Instant.ofEpochMilli(ms));
        }
        if (v.isDouble()) {
            throw new NotEvaluable("$convert of a double to string"); // its digits are the server's own formatting
        }
        throw Values.fail("$convert", "unsupported conversion from " + Values.typeName(v) + " to string");
    }
}
