package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

class PipelineEvaluatorTest {
    private static List<BsonDocument> docs(String... json) {
        return java.util.Arrays.stream(json).map(BsonDocument::parse).toList();
    }

    private static List<BsonDocument> run(String pipeline, List<BsonDocument> in) {
        BsonArray stages = BsonDocument.parse("{p: " + pipeline + "}").getArray("p");
        return PipelineEvaluator.compile(stages.getValues()).run(in);
    }

    @Test
    void sumKeepsInt32UntilItOverflowsAndSkipsNonNumbers() {
        // $sum: numbers only; int32 widens to int64 on overflow (the server's rule)
        List<BsonDocument> in = docs("{x: 2147483647}", "{x: 1}", "{x: 'a'}", "{}");
        assertEquals(BsonDocument.parse("{_id: null, t: {$numberLong: '2147483648'}}"),
                run("[{$group: {_id: null, t: {$sum: '$x'}}}]", in).get(0));
        assertEquals(BsonDocument.parse("{_id: null, t: 3}"),
                run("[{$group: {_id: null, t: {$sum: '$x'}}}]", docs("{x: 1}", "{x: 2}")).get(0));
        assertEquals(BsonDocument.parse("{_id: null, t: 3.5}"),
                run("[{$group: {_id: null, t: {$sum: '$x'}}}]", docs("{x: 1}", "{x: 2.5}")).get(0));
    }

    @Test
    void groupsByBsonEqualityAndSkipsNullsInMinAndMax() {
        // 1 and 1.0 are one group; $min/$max skip null and missing; $avg of none is null
        List<BsonDocument> out = run("[{$group: {_id: '$k', mn: {$min: '$v'}, mx: {$max: '$v'}, a: {$avg: '$w'}}}]",
                docs("{k: 1, v: null}", "{k: 1.0, v: 3}", "{k: 1, v: 'z'}"));
        assertEquals(1, out.size());
        assertEquals(BsonDocument.parse("{_id: 1, mn: 3, mx: 'z', a: null}"), out.get(0));
    }

    @Test
    void countIsAbsentOnEmptyInputAndSortByCountSortsByCount() {
        assertEquals(List.of(), run("[{$count: 'n'}]", List.of()));
        List<BsonDocument> out = run("[{$sortByCount: '$k'}]", docs("{k: 'a'}", "{k: 'b'}", "{k: 'b'}"));
        assertEquals(BsonDocument.parse("{_id: 'b', count: 2}"), out.get(0));
    }

    @Test
    void projectAndAddFieldsTakePathsAndLiterals() {
        List<BsonDocument> out = run("[{$project: {v: '$a.b', lit: {$literal: '$x'}, n: 1}}, {$addFields: {s: 7}}]",
                docs("{_id: 1, a: [{b: 1}, {b: 2}, 3], n: 5}"));
        assertEquals(BsonDocument.parse("{_id: 1, v: [1, 2], lit: '$x', n: 5, s: 7}"), out.get(0));
    }

    @Test
    void whatItDoesNotRunIsRefusedWhenCompiled() {
        for (String p : new String[] {"[{$lookup: {from: 'c', localField: 'a', foreignField: 'b', as: 'x'}}]",
                "[{$group: {_id: null, t: {$sum: {$function: {}}}}}]", "[{$project: {x: '$$NOW'}}]",
                "[{$limit: 0}]", "[{$out: 'c'}]", "[{$group: {_id: null, t: {$stdDevPop: '$x'}}}]"}) {
            assertThrows(NotEvaluable.class, () -> run(p, List.of()), p);
        }
    }

    @Test
    void arithmeticUpdatesFollowTheServersTypes() {
        // $inc of a missing field sets it; int32 overflow widens; a string fails with code 14
        assertEquals(org.bson.BsonInt32.class, UpdateArithmetic.apply("$inc", "x", null, new org.bson.BsonInt32(1)).getClass());
        BsonValue wide = UpdateArithmetic.apply("$inc", "x", new org.bson.BsonInt32(Integer.MAX_VALUE), new org.bson.BsonInt32(1));
        assertEquals(new org.bson.BsonInt64(2147483648L), wide);
        assertEquals(new org.bson.BsonInt32(0), UpdateArithmetic.apply("$mul", "x", null, new org.bson.BsonInt32(5)));
        // $mul of a missing field by a decimal: 0 × 1.5 keeps the decimal's scale, 0.0
        assertEquals(new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("0.0")),
                UpdateArithmetic.apply("$mul", "x", null, new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("1.5"))));
        // a product that changes the type is a change (the server's isIdentical): 0 × 2.5 is the double 0.0
        assertEquals(new org.bson.BsonDouble(0.0), UpdateArithmetic.apply("$mul", "x", new org.bson.BsonInt32(0),
                new org.bson.BsonDouble(2.5)));
        UpdateArithmetic.Failure f = assertThrows(UpdateArithmetic.Failure.class,
                () -> UpdateArithmetic.apply("$inc", "x", new org.bson.BsonString("a"), new org.bson.BsonInt32(1)));
        assertEquals(14, f.code);
        assertEquals(new org.bson.BsonString("a"), UpdateArithmetic.apply("$min", "x", new org.bson.BsonString("a"),
                new org.bson.BsonString("b")));
    }

    @Test
    void missingAndNullAreOneGroup() {
        // $group: a missing _id expression is null, one group with the nulls
        List<BsonDocument> out = run("[{$group: {_id: '$y', c: {$sum: 1}}}]",
                docs("{y: null}", "{}", "{y: 'a'}", "{y: 1}", "{y: null}", "{y: 2}", "{}", "{y: 'b'}", "{y: 7}"));
        assertEquals(BsonDocument.parse("{_id: null, c: 4}"), out.stream().filter(d -> d.isNull("_id")).findFirst().orElseThrow());
        assertEquals(6, out.size(), out.toString());
    }

    @Test
    void expressionsInStages() {
        List<BsonDocument> in = docs("{_id: 1, a: 2, s: 'x'}", "{_id: 2, a: 5, s: 'y'}", "{_id: 3, s: 'z'}");
        assertEquals(docs("{_id: 2, t: 10, u: 'Y'}"),
                run("[{$match: {$expr: {$gt: ['$a', 3]}}}, {$project: {t: {$multiply: ['$a', 2]}, u: {$toUpper: '$s'}}}]", in));
        assertEquals(docs("{_id: 3, k: -1}", "{_id: 1, k: 2}", "{_id: 2, k: 5}"),
                run("[{$addFields: {k: {$ifNull: ['$a', -1]}}}, {$sort: {k: 1}}, {$project: {k: 1}}]", in));
        assertEquals(docs("{_id: true, n: 7}"),
                run("[{$group: {_id: {$isNumber: '$a'}, n: {$sum: {$add: ['$a', 0]}}}}, {$match: {_id: true}}]", in));
        assertEquals(docs("{_id: 1, r: {_id: 1, a: 2, s: 'x'}}"), run("[{$limit: 1}, {$project: {r: '$$ROOT'}}]", in));
    }

    @Test
    void anExpressionTheServerFailsOnIsRefusedOnTheDocument() {
        List<BsonDocument> in = docs("{_id: 1, a: 'text'}");
        NotEvaluable e = assertThrows(NotEvaluable.class, () -> run("[{$project: {t: {$add: ['$a', 1]}}}]", in));
        assertEquals(false, e.getMessage().contains("text")); // names the operator, never the value
    }
}
