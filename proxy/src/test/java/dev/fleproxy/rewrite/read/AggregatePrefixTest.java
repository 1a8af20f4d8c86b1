package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Which leading stages of an aggregate the proxy evaluates run on the server, in the candidate
 * read: plain $project/$set/$unset/$unwind/$lookup join with $match (its server part), $sort,
 * $skip and $limit in any order; a stage that reads, writes, moves or reaches into an encrypted
 * path — in any of its slots — ends the prefix, and the proxy runs it and everything after.
 */
class AggregatePrefixTest {
    private static final String KEY = "11111111-2222-3333-4444-555555555555";
    private static final Policy POLICY = PolicyParser.parse(Map.of(
            "db.src", Map.of("key", KEY, "fields", Map.of("x", Map.of(), "s", Map.of("deterministic", true),
                    "a.b", Map.of())),
            "db.other", Map.of("key", KEY, "fields", Map.of("q", Map.of())),
            "db.star", Map.of("key", KEY, "fields", "*")), 0, "test");

    private static CollectionContext ctx(String ns) {
        return POLICY.get(ns) == null ? null : new CollectionContexts(() -> POLICY).of(POLICY.get(ns),
                new CollectionKeys(null, null, false, Duration.ofSeconds(1)));
    }

    private static AggregatePrefix prefix(String ns, String stages) {
        List<BsonValue> list = BsonDocument.parse("{s: " + stages + "}").getArray("s").getValues();
        return AggregatePrefix.of(list, ctx(ns), false, AggregatePrefixTest::ctx, "db");
    }

    /** How many leading stages the server runs, of this pipeline on db.src. */
    private static int joined(String stages) {
        return prefix("db.src", stages).from();
    }

    @Test
    void plainStagesJoinInAnyOrder() {
        String pipeline = "[{$skip: 2}, {$match: {n: 1}}, {$limit: 3}, {$sort: {n: 1}},"
                + " {$project: {n: 1, x: 1, a: 1, t: 1}}, {$set: {m: {$add: ['$n', 1]}, k: '$a.c'}},"
                + " {$unwind: {path: '$t', includeArrayIndex: 'i', preserveNullAndEmptyArrays: true}},"
                + " {$lookup: {from: 'plain', localField: 'n', foreignField: 'k', as: 'j'}}, {$unset: ['x', 'j.z']},"
                + " {$match: {'j.k': 2}}, {$group: {_id: '$x'}}]";
        AggregatePrefix p = prefix("db.src", pipeline);
        assertEquals(10, p.from());
        assertNull(p.residual());
        assertEquals(10, p.pipeline().size());
        assertEquals(BsonDocument.parse("{$match: {'j.k': 2}}"), p.pipeline().get(9));
        // $set goes by its older name, $addFields
        assertEquals(BsonDocument.parse("{$addFields: {m: {$add: ['$n', 1]}, k: '$a.c'}}"), p.pipeline().get(5));
    }

    @Test
    void aResidualMatchEndsThePrefixAndIsMatchedFirstByTheProxy() {
        AggregatePrefix p = prefix("db.src", "[{$set: {m: '$n'}}, {$match: {m: 1, x: {$gt: 1}}}, {$project: {m: 1}}]");
        assertEquals(2, p.from());
        assertNotNull(p.residual());
        assertEquals(List.of(BsonDocument.parse("{$addFields: {m: '$n'}}"), BsonDocument.parse("{$match: {m: 1}}")),
                p.pipeline());
    }

    @Test
    void inclusionAndExclusionKeepEncryptedValuesInPlaceOrDropThem() {
        assertEquals(1, joined("[{$project: {x: 1, 'a.b': 1, n: 1}}]"));
        assertEquals(1, joined("[{$project: {a: true}}]"));
        assertEquals(0, joined("[{$project: {a: 1, 'a.b': 1}}]")); // a path collision: MongoDB refuses it, the evaluator too
        assertEquals(1, joined("[{$project: {x: 0, a: 0}}]"));
        assertEquals(1, joined("[{$project: {_id: 0, m: '$n', n: 1}}]"));
        assertEquals(1, joined("[{$unset: 'x'}]"));
        assertEquals(1, joined("[{$unset: ['a', 'n']}]"));
        assertEquals(1, joined("[{$unset: 'a.b'}]"));
    }

    @Test
    void projectEndsWithAnEncryptedPathInAnySlot() {
        for (String stage : List.of(
                "{$project: {'x.y': 1}}", "{$project: {'a.b.c': 0}}", "{$project: {m: '$x'}}",
                "{$project: {m: '$a'}}", "{$project: {m: '$a.b'}}", "{$project: {m: '$x.y'}}",
                "{$project: {m: '$$ROOT'}}", "{$project: {m: '$$CURRENT.n'}}", "{$project: {m: {$literal: '$x'}}}",
                "{$project: {x: {$add: ['$n', 1]}}}", "{$project: {a: '$n'}}", "{$project: {m: {n: 1}}}",
                "{$project: {m: {$let: {vars: {v: '$x'}, in: '$$v'}}}}",
                "{$project: {m: {$map: {input: '$a', in: '$$this.b'}}}}",
                "{$project: {m: {$getField: 'n'}}}", "{$project: {}}", "{$project: {n: 1, m: 0}}")) {
            assertEquals(0, joined("[" + stage + "]"), stage);
        }
    }

    @Test
    void setEndsWithAnEncryptedPathInAnySlot() {
        for (String name : List.of("$set", "$addFields")) {
            for (String spec : List.of("{x: 1}", "{a: 1}", "{'a.b': 1}", "{s: '$n'}", "{m: '$x'}", "{m: '$s'}",
                    "{m: '$a'}", "{m: {$concat: ['$x', '']}}", "{m: '$$ROOT'}", "{m: {k: '$n'}}", "{m: {}}",
                    "{m: {$filter: {input: '$t', cond: {$eq: ['$$this', '$s']}}}}", "{'m.k': '$n'}", "{}")) {
                assertEquals(0, joined("[{" + name + ": " + spec + "}]"), name + " " + spec);
            }
        }
    }

    @Test
    void unsetEndsInsideAnEncryptedValue() {
        for (String spec : List.of("'x.y'", "['n', 'a.b.c']", "[]", "[1]", "'$n'")) {
            assertEquals(0, joined("[{$unset: " + spec + "}]"), spec);
        }
    }

    @Test
    void unwindEndsWithAnEncryptedPathInAnySlot() {
        for (String spec : List.of("'$x'", "'$a'", "'$a.b'", "'$x.y'", "'n'", "'$$ROOT'",
                "{path: '$t', includeArrayIndex: 'x'}", "{path: '$t', includeArrayIndex: 'a'}",
                "{path: '$t', includeArrayIndex: 'a.b.c'}", "{path: '$t', includeArrayIndex: '$i'}",
                "{path: '$a'}", "{path: '$t', other: 1}", "{path: '$t', preserveNullAndEmptyArrays: 1}")) {
            assertEquals(0, joined("[{$unwind: " + spec + "}]"), spec);
        }
        assertEquals(1, joined("[{$unwind: '$a.c'}]")); // beside an encrypted field, not above it
    }

    @Test
    void lookupEndsWithAnEncryptedPathOrCollectionInAnySlot() {
        for (String spec : List.of(
                "{from: 'plain', localField: 'x', foreignField: 'k', as: 'j'}",
                "{from: 'plain', localField: 'a', foreignField: 'k', as: 'j'}",
                "{from: 'plain', localField: 'a.b', foreignField: 'k', as: 'j'}",
                "{from: 'plain', localField: 'n', foreignField: 'k', as: 'x'}",
                "{from: 'plain', localField: 'n', foreignField: 'k', as: 'a'}",
                "{from: 'plain', localField: 'n', foreignField: 'k', as: 'a.b.z'}",
                "{from: 'src', localField: 'n', foreignField: 'k', as: 'j'}",
                "{from: 'other', localField: 'n', foreignField: 'k', as: 'j'}",
                "{from: {db: 'db', coll: 'plain'}, localField: 'n', foreignField: 'k', as: 'j'}",
                "{from: 'plain', localField: 'n', foreignField: '$k', as: 'j'}",
                "{from: 'plain', let: {v: '$n'}, pipeline: [], as: 'j'}",
                "{from: 'plain', localField: 'n', foreignField: 'k', as: 'j', pipeline: []}")) {
            assertEquals(0, joined("[{$lookup: " + spec + "}]"), spec);
        }
    }

    @Test
    void sortsSkipsAndLimitsJoinOnPlainPathsOnly() {
        assertEquals(0, joined("[{$sort: {x: 1}}]"));
        assertEquals(0, joined("[{$sort: {a: 1}}]"));
        assertEquals(0, joined("[{$limit: 0}]"));
        assertEquals(0, joined("[{$skip: -1}]"));
        assertEquals(0, joined("[{$group: {_id: '$n'}}]"));
        assertEquals(0, joined("[{$set: {m: 1}, $unset: 'n'}]"));
        assertEquals(3, joined("[{$sort: {n: 1}}, {$skip: 1}, {$limit: 2}, {$sort: {x: 1}}]"));
    }

    @Test
    void underEveryFieldEncryptedOnlyInclusionAndExclusionJoin() {
        assertEquals(2, prefix("db.star", "[{$project: {n: 1, m: 1}}, {$unset: 'n'}]").from());
        for (String stage : List.of("{$set: {m: 1}}", "{$project: {m: '$_id'}}", "{$unwind: '$t'}",
                "{$lookup: {from: 'plain', localField: '_id', foreignField: 'k', as: 'j'}}", "{$sort: {n: 1}}",
                "{$project: {'n.k': 1}}")) {
            assertEquals(0, prefix("db.star", "[" + stage + "]").from(), stage);
        }
    }

    @Test
    void anOutputsCarriedPathsAreFollowedThroughTheServersStagesToo() {
        List<BsonValue> stages = BsonDocument.parse("{s: [{$unwind: '$t'}, {$lookup: {from: 'plain', localField: 'n', "
                + "foreignField: 'k', as: 'j'}}, {$project: {x: 0}}]}").getArray("s").getValues();
        assertEquals(Map.of("s", false, "a.b", true), CarriedPaths.of(POLICY.get("db.src")).through(stages).paths());
    }
}
