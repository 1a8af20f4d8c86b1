package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.math.BigDecimal;
import java.math.MathContext;
import org.bson.BsonDecimal128;
import org.bson.BsonDouble;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/** The server's numeric widening (int32 < int64 < double < decimal) and the conversions it uses. */
final class Numbers {
    static final int INT = 0;
    static final int LONG = 1;
    static final int DOUBLE = 2;
    static final int DECIMAL = 3;

    private Numbers() {
    }

    static int kind(BsonValue v) {
        return v.isInt32() ? INT : v.isInt64() ? LONG : v.isDouble() ? DOUBLE : DECIMAL;
    }

    static double toDouble(BsonValue v) {
        return v.isDecimal128() ? v.asDecimal128().getValue().doubleValue() : v.asNumber().doubleValue();
    }

    /**
     * A number as the decimal the server computes with. A double becomes a decimal through
     * rounding whose digit count the proxy does not reproduce for every double, so only doubles
     * with at most 15 significant digits (where every rounding agrees) are taken.
     */
    static BigDecimal toDecimal(BsonValue v, String op) {
        BigDecimal d = Values.decimal(v, op);
        if (v.isDouble() && d.signum() != 0 && d.stripTrailingZeros().precision() > 15) {
            throw new NotEvaluable(op + " of a double with more than 15 significant digits and a decimal");
        }
        return d;
    }

    static BsonValue decimal(BigDecimal d) {
        return new BsonDecimal128(new Decimal128(d.round(MathContext.DECIMAL128)));
    }

    static BsonValue dbl(double d) {
        return new BsonDouble(d);
    }
}
