package dev.fleproxy.rewrite.evaluate;

import org.bson.BsonArray;
import org.bson.BsonValue;

/**
 * $mod: [divisor, remainder]. Both are numbers truncated toward zero to 64-bit integers (NaN,
 * infinities and out-of-range values are refused, as the server refuses them; a zero divisor
 * too). A value matches when it is a number whose truncation fits 64 bits and whose remainder
 * (the sign of the dividend's, as C++ and Java's %) equals the remainder (ModMatchExpression).
 */
final class Modulo implements Leaf {
    private final long divisor;
    private final long remainder;

    private Modulo(long divisor, long remainder) {
        this.divisor = divisor;
        this.remainder = remainder;
    }

    static Modulo parse(BsonValue spec) {
        if (!spec.isArray() || spec.asArray().size() != 2) {
            throw new NotEvaluable("$mod needs an array of two numbers (the server refuses " + spec + ")");
        }
        BsonArray a = spec.asArray();
        Long divisor = BsonNumbers.isNumber(a.get(0)) ? BsonNumbers.truncatedLong(a.get(0)) : null;
        Long remainder = BsonNumbers.isNumber(a.get(1)) ? BsonNumbers.truncatedLong(a.get(1)) : null;
        if (divisor == null || remainder == null) {
            throw new NotEvaluable("$mod: divisor and remainder must be numbers that fit 64 bits (the server "
                    + "refuses " + spec + ")");
        }
        if (divisor == 0) {
            throw new NotEvaluable("$mod: divisor cannot be 0 (the server refuses it)");
        }
        return new Modulo(divisor, remainder);
    }

    @Override
    public boolean test(BsonValue value) {
        if (!BsonNumbers.isNumber(value)) {
            return false;
        }
        Long dividend = BsonNumbers.truncatedLong(value);
        // Long.MIN_VALUE % -1 is 0 in Java, as the server's overflow::safeMod makes it
        return dividend != null && dividend % divisor == remainder;
    }
}
