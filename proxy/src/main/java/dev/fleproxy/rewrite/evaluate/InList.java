package dev.fleproxy.rewrite.evaluate;

import java.util.List;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * $in (and, negated, $nin): equal to one of the values (BSON equality, numbers by value, a whole
 * array or document compared as one value) or matching one of the regular expressions. A null in
 * the list matches a missing value too, as {$eq: null} does (InMatchExpression); against an
 * undefined value it throws NotEvaluable, as Comparison does.
 */
final class InList implements Leaf {
    private final List<BsonValue> values;
    private final List<RegexLeaf> regexes;
    private final boolean hasNull;

    /** values holds no regex and no undefined (the parser refuses undefined, as the server does). */
    InList(List<BsonValue> values, List<RegexLeaf> regexes) {
        this.values = List.copyOf(values);
        this.regexes = List.copyOf(regexes);
        this.hasNull = values.stream().anyMatch(BsonValue::isNull);
    }

    @Override
    public boolean test(BsonValue value) {
        if (hasNull && value != null && value.getBsonType() == BsonType.UNDEFINED) {
            throw Comparison.undefinedAgainstNull();
        }
        if (hasNull && value == null) {
            return true;
        }
        if (value != null) {
            for (BsonValue v : values) {
                if (BsonOrder.compare(value, v) == 0) {
                    return true;
                }
            }
        }
        for (RegexLeaf regex : regexes) {
            if (regex.test(value)) {
                return true;
            }
        }
        return false;
    }
}
