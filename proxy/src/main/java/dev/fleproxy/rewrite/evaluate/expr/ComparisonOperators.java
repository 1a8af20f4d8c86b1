package dev.fleproxy.rewrite.evaluate.expr;

import java.util.List;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * $eq, $ne, $gt, $gte, $lt, $lte and $cmp: the full BSON order across types (unlike a query's
 * comparisons, no type bracketing), a missing value below null, so {$eq: ["$missing", null]} is
 * false as on the server.
 */
final class ComparisonOperators {
    private ComparisonOperators() {
    }

    static Expr compile(String op, BsonValue operand, ExprCompiler c) {
        if (!List.of("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp").contains(op)) {
            return null;
        }
        List<Expr> args = c.exprs(Values.args(op, operand, 2, 2));
        return scope -> {
            int r = Values.compare(args.get(0).eval(scope), args.get(1).eval(scope));
            return switch (op) {
                case "$eq" -> Values.bool(r == 0);
                case "$ne" -> Values.bool(r != 0);
                case "$gt" -> Values.bool(r > 0);
                case "$gte" -> Values.bool(r >= 0);
                case "$lt" -> Values.bool(r < 0);
                case "$lte" -> Values.bool(r <= 0);
                default -> new BsonInt32(Integer.signum(r));
            };
        };
    }
}
