package dev.fleproxy.rewrite.evaluate;

import java.math.BigDecimal;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonNumber;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * One $group accumulator over one group, with the server's rules: $sum adds numbers only (int32
 * widening to int64 on overflow, a double or decimal making the sum one), $avg gives a double (a
 * decimal if one came in) or null without numbers, $min/$max skip null and missing, $first/$last
 * take null for missing, $push/$addToSet skip missing, $count counts.
 */
final class Accumulator {
    private final String operator;
    private final Expression argument;
    private long longSum;
    private boolean intOnly = true;
    private boolean overflowed;
    private double doubleSum;
    private BigDecimal decimalSum;
    private long numbers;
    private BsonValue value;
    private boolean seen;
    private final BsonArray values = new BsonArray();
    private final TreeSet<BsonValue> set = new TreeSet<>(BsonOrder.COMPARATOR);

    private Accumulator(String operator, Expression argument) {
        this.operator = operator;
        this.argument = argument;
    }

    /** Checks the operator and its argument once, for the stage; {@link #fresh} makes one per group. */
    static Accumulator compile(BsonValue spec) {
        if (!spec.isDocument() || spec.asDocument().size() != 1) {
            throw new NotEvaluable("an accumulator that is not {operator: expression}");
        }
        String op = spec.asDocument().getFirstKey();
        BsonValue arg = spec.asDocument().get(op);
        switch (op) {
            case "$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet" -> {
                return new Accumulator(op, Expression.compile(arg));
            }
            case "$count" -> {
                if (!arg.isDocument() || !arg.asDocument().isEmpty()) {
                    throw new NotEvaluable("$count takes {}");
                }
                return new Accumulator(op, null);
            }
            default -> throw new NotEvaluable("the accumulator " + op);
        }
    }

    Accumulator fresh() {
        return new Accumulator(operator, argument);
    }

    void add(BsonDocument doc) {
        if (operator.equals("$count")) {
            numbers++;
            return;
        }
        BsonValue v = argument.evaluate(doc);
        switch (operator) {
            case "$sum", "$avg" -> addNumber(v);
            case "$min", "$max" -> {
                if (v != null && !v.isNull()) {
                    int c = value == null ? 0 : BsonOrder.compare(v, value);
                    if (value == null || (operator.equals("$min") ? c < 0 : c > 0)) {
                        value = v;
                    }
                }
            }
            case "$first" -> {
                if (!seen) {
                    value = v == null ? BsonNull.VALUE : v;
                }
            }
            case "$last" -> value = v == null ? BsonNull.VALUE : v;
            case "$push" -> {
                if (v != null) {
                    values.add(v);
                }
            }
            case "$addToSet" -> {
                if (v != null) {
                    set.add(v);
                }
            }
            default -> throw new IllegalStateException(operator);
        }
        seen = true;
    }

    private void addNumber(BsonValue v) {
        if (v == null || !(v.isNumber() || v.isDecimal128())) {
            return;
        }
        numbers++;
        if (v.isDecimal128() || decimalSum != null) {
            BigDecimal d = v.isDecimal128() ? v.asDecimal128().decimal128Value().bigDecimalValue()
                    : v.isDouble() ? new BigDecimal(v.asDouble().getValue()) : BigDecimal.valueOf(((BsonNumber) v).longValue());
            if (decimalSum == null) {
                decimalSum = intOnly && !overflowed ? BigDecimal.valueOf(longSum) : new BigDecimal(doubleSum);
            }
            decimalSum = decimalSum.add(d);
            return;
        }
        doubleSum += ((BsonNumber) v).doubleValue();
        if (v.isDouble()) {
            intOnly = false;
        } else if (intOnly && !overflowed) {
            try {
                longSum = Math.addExact(longSum, ((BsonNumber) v).longValue());
            } catch (ArithmeticException e) {
                overflowed = true;
            }
            if (!v.isInt32()) {
                widened = true;
            }
        }
    }

    private boolean widened;

    BsonValue result() {
        return switch (operator) {
            case "$count" -> new BsonInt32((int) numbers);
            case "$sum" -> sum();
            case "$avg" -> numbers == 0 ? BsonNull.VALUE : decimalSum != null
                    ? new BsonDecimal128(new Decimal128(decimalSum.divide(BigDecimal.valueOf(numbers),
                    java.math.MathContext.DECIMAL128)))
                    : new BsonDouble(doubleSum / numbers);
            case "$min", "$max" -> value == null ? BsonNull.VALUE : value;
            case "$first", "$last" -> value == null ? BsonNull.VALUE : value;
            case "$push" -> values;
            case "$addToSet" -> new BsonArray(new java.util.ArrayList<>(set));
            default -> throw new IllegalStateException(operator);
        };
    }

    private BsonValue sum() {
        if (decimalSum != null) {
            return new BsonDecimal128(new Decimal128(decimalSum.round(java.math.MathContext.DECIMAL128)));
        }
        if (!intOnly || overflowed) {
            return new BsonDouble(doubleSum);
        }
        return !widened && longSum == (int) longSum ? new BsonInt32((int) longSum) : new BsonInt64(longSum);
    }

    /** The accumulated values of a group's documents, under its output field names. */
    static BsonDocument results(java.util.Map<String, Accumulator> accumulators, BsonValue id) {
        BsonDocument out = new BsonDocument("_id", id);
        accumulators.forEach((name, acc) -> out.put(name, acc.result()));
        return out;
    }
}
