package dev.fleproxy.rewrite.evaluate;

import java.math.BigDecimal;
import java.math.RoundingMode;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/** The server's conversions of BSON numbers to integers and to truth values (bsonelement.h). */
public final class BsonNumbers {
    /** 2^63 as a double: doubles at or above it do not fit a long. */
    private static final double TWO_TO_63 = 0x1p63;
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private BsonNumbers() {
    }

    static boolean isNumber(BsonValue v) {
        return v != null && (v.isInt32() || v.isInt64() || v.isDouble() || v.isDecimal128());
    }

    /**
     * parseIntegerElementToLong: an integral number that fits a long, else null (NaN, infinities,
     * fractions, out of range, not a number).
     */
    static Long exactLong(BsonValue v) {
        if (v.isInt32() || v.isInt64()) {
            return v.asNumber().longValue();
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            boolean fits = !Double.isNaN(d) && d < TWO_TO_63 && d >= -TWO_TO_63;
            return fits && d == Math.rint(d) ? (Long) (long) d : null;
        }
        if (v.isDecimal128()) {
            Decimal128 d = v.asDecimal128().getValue();
            if (!d.isFinite()) {
                return null;
            }
            try {
                return BsonOrder.decimal(d).longValueExact();
            } catch (ArithmeticException fractionOrRange) {
                return null;
            }
        }
        return null;
    }

    /** exactLong within an int, else null (parseIntegerElementToInt). */
    static Integer exactInt(BsonValue v) {
        Long l = exactLong(v);
        return l != null && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE ? (Integer) l.intValue() : null;
    }

    /**
     * tryCoerce to a long: a number truncated toward zero, null when NaN, infinite, out of range or
     * not a number. $mod coerces its arguments and its dividends this way.
     */
    static Long truncatedLong(BsonValue v) {
        if (v.isInt32() || v.isInt64()) {
            return v.asNumber().longValue();
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            return Double.isFinite(d) && d < TWO_TO_63 && d >= -TWO_TO_63 ? (Long) (long) d : null;
        }
        if (v.isDecimal128()) {
            Decimal128 d = v.asDecimal128().getValue();
            if (!d.isFinite()) {
                return null;
            }
            BigDecimal t = BsonOrder.decimal(d).setScale(0, RoundingMode.DOWN);
            return t.compareTo(LONG_MIN) >= 0 && t.compareTo(LONG_MAX) <= 0 ? (Long) t.longValueExact() : null;
        }
        return null;
    }

    /** BSONElement::trueValue: false for false, zeros, null, undefined and missing; true otherwise (NaN too). */
    public static boolean trueValue(BsonValue v) {
        if (v == null || v.isNull() || v.getBsonType() == org.bson.BsonType.UNDEFINED) {
            return false;
        }
        if (v.isBoolean()) {
            return v.asBoolean().getValue();
        }
        if (v.isInt32() || v.isInt64()) {
            return v.asNumber().longValue() != 0;
        }
        if (v.isDouble()) {
            return v.asDouble().getValue() != 0.0;
        }
        if (v.isDecimal128()) {
            Decimal128 d = v.asDecimal128().getValue();
            return !d.isFinite() || BsonOrder.decimal(d).signum() != 0;
        }
        return true;
    }
}
