package dev.fleproxy.rewrite.evaluate;

import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * $eq, $lt, $lte, $gt, $gte and implicit equality against one value, with the server's type
 * bracketing (ComparisonMatchExpression::matchesSingleElement): values of different canonical
 * types never compare, except null against missing (equal; against the deprecated undefined, where
 * mongod 7 and 8 disagree, it throws NotEvaluable), and MinKey/MaxKey operands, which are
 * below/above everything. All numbers are one canonical type, compared by
 * value; NaN equals NaN and is neither greater nor less than any number.
 */
final class Comparison implements Leaf {
    enum Op { EQ, LT, LTE, GT, GTE }

    private final Op op;
    private final BsonValue operand;

    /** The operand is checked by the parser: never undefined; a regex only with EQ. */
    Comparison(Op op, BsonValue operand) {
        this.op = op;
        this.operand = operand;
    }

    @Override
    public boolean test(BsonValue value) {
        BsonType type = value == null ? BsonType.END_OF_DOCUMENT : value.getBsonType();
        if (type != operand.getBsonType()) {
            int valueRank = BsonOrder.rank(type);
            int operandRank = BsonOrder.rank(operand.getBsonType());
            if (valueRank != operandRank) {
                return acrossTypes(value, valueRank + operandRank);
            }
        }
        if (op != Op.EQ && (isNaN(value) || isNaN(operand))) {
            boolean both = isNaN(value) && isNaN(operand);
            return (op == Op.LTE || op == Op.GTE) && both;
        }
        int c = BsonOrder.compare(value, operand);
        return switch (op) {
            case EQ -> c == 0;
            case LT -> c < 0;
            case LTE -> c <= 0;
            case GT -> c > 0;
            case GTE -> c >= 0;
        };
    }

    /** Different canonical types: only null against missing/undefined (ranks 5 + 0), and Min/MaxKey. */
    private boolean acrossTypes(BsonValue value, int rankSum) {
        if (rankSum == 5) {
            if (value != null) {
                throw undefinedAgainstNull();
            }
            return op == Op.EQ || op == Op.LTE || op == Op.GTE;
        }
        if (operand.getBsonType() == BsonType.MAX_KEY) {
            return op == Op.LT || op == Op.LTE;
        }
        if (operand.getBsonType() == BsonType.MIN_KEY) {
            return op == Op.GT || op == Op.GTE;
        }
        return false;
    }

    /**
     * mongod 7 matches an undefined value with {$eq: null}, {$gte: null}, {$lte: null} and {$in: [null]};
     * mongod 8 does not ("Migrate Undefined Data and Queries"). Undefined is deprecated and rare; the
     * evaluator does not know the server's version, so it refuses rather than pick one.
     */
    static NotEvaluable undefinedAgainstNull() {
        return new NotEvaluable("a null comparison met an undefined value: mongod 7 matches it, mongod 8 does not");
    }

    private static boolean isNaN(BsonValue v) {
        return v.isDouble() && Double.isNaN(v.asDouble().getValue())
                || v.isDecimal128() && v.asDecimal128().getValue().isNaN();
    }
}
