package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * $round (half to even, as the server rounds) and $trunc to a number of decimal places in
 * [-20, 100]: whole numbers change only for a negative place; a double is rounded through its
 * decimal form (the server quantizes a 34-digit decimal), a decimal is quantized to the place.
 */
final class Rounding {
    private Rounding() {
    }

    static BsonValue apply(String op, BsonValue n, BsonValue placeValue) {
        if (!Values.isNumber(n)) {
            throw Values.fail(op, "only numbers are supported");
        }
        Integer place = Values.isNumber(placeValue) ? Values.exactInt(placeValue) : null;
        if (place == null || place < -20 || place > 100) {
            throw Values.fail(op, "the place must be a whole number in [-20, 100]");
        }
        RoundingMode mode = op.equals("$round") ? RoundingMode.HALF_EVEN : RoundingMode.DOWN;
        int kind = Numbers.kind(n);
        if (kind <= Numbers.LONG) {
            if (place >= 0) {
                return n;
            }
            BigDecimal r = BigDecimal.valueOf(n.asNumber().longValue()).setScale(place, mode);
            try {
                long l = r.longValueExact();
                if (kind == Numbers.INT && l == (int) l) {
                    return new BsonInt32((int) l);
                }
                if (kind == Numbers.INT) {
                    throw new NotEvaluable(op + " of an int32 past its range");
                }
                return new BsonInt64(l);
            } catch (ArithmeticException e) {
                throw new NotEvaluable(op + " of an int64 past its range");
            }
        }
        if (kind == Numbers.DOUBLE) {
            double d = n.asDouble().getValue();
            if (!Double.isFinite(d) || d == 0) {
                return n;
            }
            BigDecimal r = new BigDecimal(d).round(new MathContext(34, RoundingMode.HALF_EVEN)).setScale(place, mode);
            double out = r.doubleValue();
            return Numbers.dbl(out == 0 && d < 0 ? -0.0 : out);
        }
        return Numbers.decimal(Values.decimal(n, op).setScale(place, mode));
    }
}
