package dev.fleproxy.rewrite.evaluate;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.BsonType;

/**
 * {$expr: expression} in a filter: the document matches when the expression's value is true by
 * the server's truth (false, 0, null and missing are not). Only on whole documents: the server
 * refuses $expr inside $elemMatch, so the proxy does too.
 */
record ExprFilter(Expression expression) implements FilterNode {
    @Override
    public boolean matches(BsonDocument doc) {
        BsonValue v = expression.evaluate(doc);
        if (v == null || v.isNull() || v.getBsonType() == BsonType.UNDEFINED) {
            return false;
        }
        return BsonNumbers.trueValue(v);
    }

    @Override
    public boolean matchesValue(BsonValue value) {
        throw new NotEvaluable("$expr inside $elemMatch (the server refuses it)");
    }
}
