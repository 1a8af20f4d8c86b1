package dev.fleproxy.rewrite.query;

import dev.fleproxy.rewrite.bson.BsonValueBytes;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.bson.BsonDecimal128;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * The stored forms a number may have that MongoDB's equality takes as equal to it. The server
 * compares int32, int64, double and decimal128 by exact value (compare_numbers.h: a double equals
 * a decimal only if the decimal converts to it exactly), NaN equals NaN and -0.0 equals 0; but an
 * envelope hides the value, so the server can only compare the bytes it was given. A deterministic
 * field's equality therefore asks for the envelope of every form below ({@link FilterRewriter}).
 *
 * <p>For a finite value v: int32 v and int64 v if v is an integer in their range; the double v if
 * v is exactly a double (0.0 and -0.0 both for zero); every decimal128 whose value is v — for v
 * not zero, each coefficient-and-exponent pair with at most 34 digits (1, 1.0, …, 1.000…0 with
 * 33 zeros: the 34 ways to write 1); for zero, exponents 0 down to -33, either sign (0, 0.0, …,
 * -0E-33), <em>not</em> the other 12,220 exponents a decimal zero may carry (0E+1, 0E-34, …).
 * NaN: the double NaNs 0x7ff8… and 0xfff8… and the decimal NaN, -NaN, sNaN and -sNaN (other
 * payloads are not asked for). An infinity: the double and the decimal of its sign. Anything
 * that is not a number is its only form.
 *
 * <p>Only the value itself: an array or document holding numbers is one envelope, compared whole
 * and exact on each element's type, as before.
 */
public final class NumericForms {
    /** Decimal128's coefficient digits and exponent range (IEEE 754-2008 decimal128). */
    static final int DECIMAL_DIGITS = 34;
    static final int DECIMAL_MIN_EXPONENT = -6176;
    static final int DECIMAL_MAX_EXPONENT = 6111;
    /** How many places a decimal zero is asked for with: as many as a one may have. */
    static final int ZERO_PLACES = DECIMAL_DIGITS - 1;

    private static final BigDecimal INT_MIN = BigDecimal.valueOf(Integer.MIN_VALUE);
    private static final BigDecimal INT_MAX = BigDecimal.valueOf(Integer.MAX_VALUE);
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final long DECIMAL_SIGN = 1L << 63;
    private static final int DECIMAL_EXPONENT_SHIFT = 49;
    private static final int DECIMAL_EXPONENT_BIAS = 6176;
    /** Decimal128 NaN and sNaN, high 64 bits (the low ones zero). */
    private static final long DECIMAL_NAN = 0x7c00000000000000L;
    private static final long DECIMAL_SNAN = 0x7e00000000000000L;

    private NumericForms() {
    }

    /**
     * The value's forms, each once (by its BSON type and bytes), the value's own form first.
     * Every one equals the value by MongoDB's comparison; for a number, every stored form equal to
     * it is among them except the decimal zeros and NaN payloads named above.
     */
    public static List<BsonValue> of(BsonValue v) {
        List<BsonValue> out = new ArrayList<>();
        out.add(v);
        if (v.isInt32() || v.isInt64()) {
            finite(BigDecimal.valueOf(v.asNumber().longValue()), out);
        } else if (v.isDouble()) {
            double d = v.asDouble().getValue();
            if (Double.isNaN(d)) {
                nan(out);
            } else if (Double.isInfinite(d)) {
                infinite(d > 0, out);
            } else {
                finite(new BigDecimal(d), out);
            }
        } else if (v.isDecimal128()) {
            Decimal128 x = v.asDecimal128().getValue();
            if (x.isNaN()) {
                nan(out);
            } else if (x.isInfinite()) {
                infinite(!x.isNegative(), out);
            } else {
                finite(decimalValue(x), out);
            }
        } else {
            return out;
        }
        return distinct(out);
    }

    /** True if the value has more than one form: its equality needs more than one envelope. */
    public static boolean several(BsonValue v) {
        return (v.isInt32() || v.isInt64() || v.isDouble() || v.isDecimal128()) && of(v).size() > 1;
    }

    private static void finite(BigDecimal value, List<BsonValue> out) {
        boolean integral = value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
        if (integral && value.compareTo(INT_MIN) >= 0 && value.compareTo(INT_MAX) <= 0) {
            out.add(new BsonInt32(value.intValueExact()));
        }
        if (integral && value.compareTo(LONG_MIN) >= 0 && value.compareTo(LONG_MAX) <= 0) {
            out.add(new BsonInt64(value.longValueExact()));
        }
        double d = value.doubleValue();
        if (value.signum() == 0) {
            out.add(new BsonDouble(0.0));
            out.add(new BsonDouble(-0.0));
        } else if (Double.isFinite(d) && new BigDecimal(d).compareTo(value) == 0) {
            out.add(new BsonDouble(d));
        }
        decimals(value, out);
    }

    /** Every decimal128 whose value is this one (for zero, the bounded set of the class comment). */
    private static void decimals(BigDecimal value, List<BsonValue> out) {
        if (value.signum() == 0) {
            for (int exponent = 0; exponent >= -ZERO_PLACES; exponent--) {
                out.add(decimal(false, BigInteger.ZERO, exponent));
                out.add(decimal(true, BigInteger.ZERO, exponent));
            }
            return;
        }
        BigDecimal stripped = value.stripTrailingZeros();
        BigInteger coefficient = stripped.unscaledValue().abs();
        int digits = stripped.precision();
        int exponent = -stripped.scale();
        for (int zeros = 0; digits + zeros <= DECIMAL_DIGITS; zeros++) {
            int e = exponent - zeros;
            if (e >= DECIMAL_MIN_EXPONENT && e <= DECIMAL_MAX_EXPONENT) {
                out.add(decimal(value.signum() < 0, coefficient.multiply(BigInteger.TEN.pow(zeros)), e));
            }
        }
    }

    /** A decimal128 from its parts (BID encoding; a coefficient of at most 34 digits fits 113 bits). */
    private static BsonDecimal128 decimal(boolean negative, BigInteger coefficient, int exponent) {
        long high = (negative ? DECIMAL_SIGN : 0) | ((long) (exponent + DECIMAL_EXPONENT_BIAS) << DECIMAL_EXPONENT_SHIFT)
                | coefficient.shiftRight(64).longValue();
        long low = coefficient.longValue();
        return new BsonDecimal128(Decimal128.fromIEEE754BIDEncoding(high, low));
    }

    private static void nan(List<BsonValue> out) {
        out.add(new BsonDouble(Double.longBitsToDouble(0x7ff8000000000000L)));
        out.add(new BsonDouble(Double.longBitsToDouble(0xfff8000000000000L)));
        out.add(new BsonDecimal128(Decimal128.fromIEEE754BIDEncoding(DECIMAL_NAN, 0)));
        out.add(new BsonDecimal128(Decimal128.fromIEEE754BIDEncoding(DECIMAL_NAN | DECIMAL_SIGN, 0)));
        out.add(new BsonDecimal128(Decimal128.fromIEEE754BIDEncoding(DECIMAL_SNAN, 0)));
        out.add(new BsonDecimal128(Decimal128.fromIEEE754BIDEncoding(DECIMAL_SNAN | DECIMAL_SIGN, 0)));
    }

    private static void infinite(boolean positive, List<BsonValue> out) {
        out.add(new BsonDouble(positive ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY));
        out.add(new BsonDecimal128(positive ? Decimal128.POSITIVE_INFINITY : Decimal128.NEGATIVE_INFINITY));
    }

    /** A finite decimal's value; the driver refuses to convert -0, which equals 0. */
    private static BigDecimal decimalValue(Decimal128 d) {
        try {
            return d.bigDecimalValue();
        } catch (ArithmeticException negativeZero) {
            return BigDecimal.ZERO;
        }
    }

    /**
     * Each form once, by type and bytes: not by BsonValue.equals, which takes every NaN as one
     * value and would drop the second NaN form.
     */
    private static List<BsonValue> distinct(List<BsonValue> forms) {
        List<BsonValue> out = new ArrayList<>(forms.size());
        Set<String> seen = new HashSet<>();
        for (BsonValue f : forms) {
            BsonValueBytes b = BsonValueBytes.of(f);
            if (seen.add(b.type() + ":" + HexFormat.of().formatHex(b.bytes()))) {
                out.add(f);
            }
        }
        return out;
    }
}
