package dev.fleproxy.rewrite.evaluate;

import dev.fleproxy.rewrite.evaluate.expr.Expr;
import dev.fleproxy.rewrite.evaluate.expr.ExprCompiler;
import dev.fleproxy.rewrite.evaluate.expr.ExprFailure;
import dev.fleproxy.rewrite.evaluate.expr.Scope;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * An aggregation expression as the stages use it ({@link ExprCompiler}: paths, literals,
 * variables and the operator families of the expr package), evaluated on one document. Where the
 * server would fail the command on a value, the proxy refuses it: a {@link NotEvaluable} at
 * evaluation time, answered with the proxy's error, which quotes no value.
 */
abstract class Expression {
    /** The value, or null when it is missing (a path to nothing). */
    abstract BsonValue evaluate(BsonDocument doc);

    static Expression compile(BsonValue v) {
        Expr e = ExprCompiler.compile(v);
        return new Expression() {
            @Override
            BsonValue evaluate(BsonDocument doc) {
                try {
                    return e.eval(Scope.of(doc));
                } catch (ExprFailure f) {
                    throw new NotEvaluable("the server fails this expression on a document: " + f.getMessage());
                }
            }
        };
    }
}
