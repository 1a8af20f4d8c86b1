package dev.fleproxy.rewrite.evaluate.expr;

import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.fails;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.is;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.refused;

import org.junit.jupiter.api.Test;

class LogicAndComparisonTest {
    @Test
    void comparesInBsonOrderMissingBelowNull() {
        is("true", "{$eq: [1, 1.0]}");
        is("false", "{$eq: ['$none', null]}");
        is("true", "{$lt: ['$none', null]}");
        is("true", "{$gt: ['a', 5]}"); // strings above numbers: no type bracketing
        is("-1", "{$cmp: [1, 2]}");
        is("1", "{$cmp: [[1], {}]}");
        is("true", "{$ne: ['$a', 2]}", "{a: 1}");
        is("true", "{$gte: ['$a.b', [1]]}", "{a: [{b: 1}]}");
        refused("{$eq: [1]}", "{}");
    }

    @Test
    void booleansAndConditionals() {
        is("true", "{$and: []}");
        is("false", "{$and: [1, 0]}");
        is("true", "{$or: [null, 'x']}");
        is("true", "{$not: [0]}");
        is("false", "{$not: [[]]}"); // an array is true, even empty
        is("'y'", "{$cond: [{$gt: ['$a', 1]}, 'y', 'n']}", "{a: 2}");
        is("'n'", "{$cond: {if: '$missing', then: 'y', else: 'n'}}");
        is("2", "{$ifNull: [null, '$missing', 2]}");
        is("missing", "{$ifNull: [null, '$missing']}");
        is("'b'", "{$switch: {branches: [{case: false, then: 'a'}, {case: 1, then: 'b'}], default: 'c'}}");
        fails("{$switch: {branches: [{case: false, then: 'a'}]}}", "{}");
        is("1", "{$cond: [true, 1, {$divide: [1, 0]}]}"); // the other branch is not evaluated
    }

    @Test
    void variablesAndLiterals() {
        is("{a: 1}", "'$$ROOT'", "{a: 1}");
        is("1", "'$$CURRENT.a'", "{a: 1}");
        is("'$a'", "{$literal: '$a'}");
        is("3", "{$let: {vars: {x: 1, y: '$a'}, in: {$add: ['$$x', '$$y']}}}", "{a: 2}");
        is("missing", "'$$REMOVE'");
        refused("'$$unknown'", "{}");
        refused("'$$NOW'", "{}");
        refused("{$function: {}}", "{}");
        refused("{$add: [1], $multiply: [2]}", "{}");
    }
}
