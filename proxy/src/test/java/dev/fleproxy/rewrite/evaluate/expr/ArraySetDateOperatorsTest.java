package dev.fleproxy.rewrite.evaluate.expr;

import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.fails;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.is;
import static dev.fleproxy.rewrite.evaluate.expr.ExprAssert.refused;

import org.junit.jupiter.api.Test;

class ArraySetDateOperatorsTest {
    @Test
    void arrays() {
        is("2", "{$size: '$a'}", "{a: [1, 2]}");
        fails("{$size: '$a'}", "{}");
        is("3", "{$arrayElemAt: ['$a', -1]}", "{a: [1, 2, 3]}");
        is("missing", "{$arrayElemAt: ['$a', 5]}", "{a: [1]}");
        is("null", "{$arrayElemAt: ['$a', 0]}", "{}");
        is("1", "{$first: '$a'}", "{a: [1, 2]}");
        is("missing", "{$last: [[]]}");
        is("true", "{$in: [1.0, [2, 1]]}");
        fails("{$in: [1, '$a']}", "{}");
        is("[1, 2, 3]", "{$concatArrays: [[1], [2, 3]]}");
        is("null", "{$concatArrays: [[1], '$a']}", "{}");
        is("[2, 3]", "{$slice: [[1, 2, 3], -2]}");
        is("[2]", "{$slice: [[1, 2, 3], 1, 1]}");
        fails("{$slice: [[1, 2, 3], 1, 0]}", "{}");
        is("[3, 2, 1]", "{$reverseArray: [[1, 2, 3]]}");
        is("true", "{$isArray: [[1]]}");
        is("[2, 3]", "{$filter: {input: '$a', cond: {$gt: ['$$this', 1]}}}", "{a: [1, 2, 3]}");
        is("[2]", "{$filter: {input: '$a', as: 'n', cond: {$gt: ['$$n', 1]}, limit: 1}}", "{a: [1, 2, 3]}");
        is("[2, 4]", "{$map: {input: '$a', as: 'n', in: {$multiply: ['$$n', 2]}}}", "{a: [1, 2]}");
        is("[11, 12]", "{$map: {input: '$a', in: {$add: ['$$this', '$b']}}}", "{a: [1, 2], b: 10}");
        is("6", "{$reduce: {input: '$a', initialValue: 0, in: {$add: ['$$value', '$$this']}}}", "{a: [1, 2, 3]}");
        is("null", "{$map: {input: '$a', in: 1}}", "{}");
        is("[0, 2, 4]", "{$range: [0, 5, 2]}");
        is("[3, 2]", "{$range: [3, 1, -1]}");
        fails("{$range: [0, 5, 0]}", "{}");
        refused("{$map: {input: [], in: '$$other'}}", "{}");
    }

    @Test
    void sets() {
        is("[1, 2, 3]", "{$setUnion: [[3, 1], [2, 1.0]]}");
        is("[1]", "{$setIntersection: [[1, 2], [1]]}");
        is("[2]", "{$setDifference: [[1, 2], [1]]}");
        is("null", "{$setDifference: [[1, 2], null]}");
        is("true", "{$setEquals: [[1, 2, 2], [2, 1]]}");
        is("true", "{$setIsSubset: [[1], [1, 2]]}");
        fails("{$setIsSubset: [null, [1]]}", "{}");
        is("true", "{$anyElementTrue: [[0, 1]]}");
        is("false", "{$allElementsTrue: [[1, null]]}");
        is("true", "{$allElementsTrue: [[]]}");
    }

    @Test
    void dates() {
        String d = "{d: {$date: '2024-03-10T13:45:30.123Z'}}";
        is("2024", "{$year: '$d'}", d);
        is("3", "{$month: '$d'}", d);
        is("10", "{$dayOfMonth: '$d'}", d);
        is("13", "{$hour: '$d'}", d);
        is("45", "{$minute: '$d'}", d);
        is("30", "{$second: '$d'}", d);
        is("123", "{$millisecond: '$d'}", d);
        is("1", "{$dayOfWeek: '$d'}", d); // a Sunday
        is("70", "{$dayOfYear: '$d'}", d);
        is("9", "{$hour: {date: '$d', timezone: 'America/New_York'}}", d); // EDT began that morning
        is("15", "{$hour: {date: '$d', timezone: '+02:00'}}", d);
        is("null", "{$year: '$none'}", d);
        fails("{$year: 'x'}", d);
        is("'2024-03-10T13:45:30.123Z'", "{$dateToString: {date: '$d'}}", d);
        is("'10/03/2024 070 1 +0000'", "{$dateToString: {date: '$d', format: '%d/%m/%Y %j %w %z'}}", d);
        is("'n/a'", "{$dateToString: {date: '$none', onNull: 'n/a'}}", d);
        refused("{$dateToString: {date: '$d', format: '%b'}}", d);
    }
}
