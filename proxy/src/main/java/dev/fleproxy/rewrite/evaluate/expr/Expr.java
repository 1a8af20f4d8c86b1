package dev.fleproxy.rewrite.evaluate.expr;

import org.bson.BsonValue;

/** One compiled aggregation expression: its value in a scope, or null when it is missing. */
@FunctionalInterface
public interface Expr {
    BsonValue eval(Scope scope);
}
