package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Which output paths carry an encrypted field's values through the stages the proxy evaluates,
 * and the rule an $out or $merge target must meet: the paths are followed conservatively, and a
 * target that would store one unencrypted, in _id, or a randomized one deterministically is
 * refused (naming paths, never values).
 */
class OutputTargetTest {
    private static final String KEY = "11111111-2222-3333-4444-555555555555";
    private static final Policy POLICY = PolicyParser.parse(Map.of(
            "db.src", Map.of("key", KEY, "fields", Map.of("x", Map.of(), "s", Map.of("deterministic", true),
                    "a.b", Map.of())),
            "db.same", Map.of("key", KEY, "fields", Map.of("x", Map.of(), "s", Map.of("deterministic", true),
                    "a", Map.of())),
            "db.detx", Map.of("key", KEY, "fields", Map.of("x", Map.of("deterministic", true),
                    "s", Map.of("deterministic", true), "a", Map.of())),
            "db.star", Map.of("key", KEY, "fields", "*")), 0, "test");

    private static CollectionContext ctx(String ns) {
        return POLICY.get(ns) == null ? null : new CollectionContexts(() -> POLICY).of(POLICY.get(ns),
                new CollectionKeys(null, null, false, Duration.ofSeconds(1)));
    }

    private static CarriedPaths carried(String source, String stages) {
        List<BsonValue> list = BsonDocument.parse("{s: " + stages + "}").getArray("s").getValues();
        return CarriedPaths.of(POLICY.get(source)).through(list);
    }

    private static void check(String source, String stages, String stage) {
        OutputStage out = OutputStage.of(BsonDocument.parse(stage), "db", source);
        OutputTarget.check(out, carried(source, stages), ctx(out.namespace()), source);
    }

    @Test
    void pathsAreFollowedThroughTheStages() {
        assertEquals(Map.of("x", true, "s", false, "a.b", true), carried("db.src", "[{$sort: {x: 1}}, {$limit: 3}]").paths());
        assertEquals(Map.of("s", false), carried("db.src", "[{$project: {x: 0, a: 0}}]").paths());
        assertEquals(Map.of("y", true, "s", false), carried("db.src", "[{$project: {y: '$x', s: 1, n: 1}}]").paths());
        assertEquals(Map.of("a.b", true), carried("db.src", "[{$project: {'a.b': 1}}]").paths());
        assertEquals(Map.of("_id", true, "t", false), carried("db.src",
                "[{$group: {_id: '$a', t: {$first: '$s'}, c: {$sum: 1}}}]").paths());
        assertTrue(carried("db.src", "[{$count: 'n'}]").none());
        assertEquals(Map.of("s", false, "a.b", true), carried("db.src", "[{$set: {x: 'lit'}}]").paths());
        assertEquals(Map.of("s", false, "a.b", true, "y", true), carried("db.src", "[{$set: {x: 1, y: '$x'}}]").paths());
        assertEquals(Map.of("a.b", true), carried("db.src", "[{$unset: ['x', 's']}]").paths());
        // under "*" every top-level field but _id, until an inclusion names the kept ones
        assertEquals(Boolean.TRUE, carried("db.star", "[]").everyTopLevel());
        CarriedPaths kept = carried("db.star", "[{$project: {n: 1}}]");
        assertEquals(null, kept.everyTopLevel());
        assertEquals(Map.of("n", true), kept.paths());
    }

    @Test
    void targetsThatKeepEveryCarriedPathEncryptedTakeTheOutput() {
        assertDoesNotThrow(() -> check("db.src", "[{$sort: {x: 1}}]", "{$out: 'same'}"));
        assertDoesNotThrow(() -> check("db.src", "[{$sort: {x: 1}}]", "{$out: 'star'}"));
        assertDoesNotThrow(() -> check("db.src", "[{$sort: {x: 1}}, {$project: {n: 1}}]", "{$out: 'plain'}"));
        assertDoesNotThrow(() -> check("db.src", "[{$sort: {x: 1}}]", "{$merge: {into: 'same', on: 's'}}"));
        assertDoesNotThrow(() -> check("db.src", "[{$sort: {x: 1}}]", "{$merge: {into: {db: 'db', coll: 'same'}, "
                + "on: ['_id', 's'], whenMatched: 'replace', whenNotMatched: 'discard'}}"));
    }

    @Test
    void targetsThatWouldWeakenProtectionAreRefused() {
        String[][] cases = {
                {"[{$sort: {x: 1}}]", "{$out: 'plain'}", "does not encrypt"},
                {"[{$project: {y: '$x', s: 1}}]", "{$out: 'same'}", "'y'"},
                {"[{$group: {_id: '$s'}}]", "{$out: 'same'}", "_id"},
                {"[]", "{$out: 'detx'}", "deterministic field 'x'"},
                {"[{$project: {s: 1}}]", "{$merge: {into: 'same', on: 'x'}}", "deterministic"},
                {"[]", "{$merge: {into: 'same', on: 'a.c'}}", "deterministic"},
        };
        for (String[] c : cases) {
            Refusal r = assertThrows(Refusal.class, () -> check("db.src", c[0], c[1]), c[1]);
            assertTrue(r.getMessage().contains(c[2]), r.getMessage());
        }
        Refusal r = assertThrows(Refusal.class, () -> check("db.star", "[]", "{$out: 'same'}"));
        assertTrue(r.getMessage().contains("fields: \"*\""), r.getMessage());
    }

    @Test
    void onlyStagesTheProxyCarriesOutExactlyAreRead() {
        for (String stage : new String[] {"{$out: {db: 'db', coll: 'c', timeseries: {timeField: 't'}}}",
                "{$merge: {into: 'c', let: {v: 1}}}", "{$merge: {into: 'c', whenMatched: [{$set: {a: 1}}]}}",
                "{$merge: {into: 'c', whenMatched: 'keepExisting', whenNotMatched: 'fail'}}",
                "{$merge: {into: 'c', on: []}}", "{$out: 'system.views'}", "{$out: {db: 'admin', coll: 'c'}}",
                "{$merge: {into: 'c', whenNotMatched: 'upsert'}}"}) {
            assertThrows(Refusal.class, () -> OutputStage.of(BsonDocument.parse(stage), "db", "db.src"), stage);
        }
        OutputStage m = OutputStage.of(BsonDocument.parse("{$merge: 'c'}"), "db", "db.src");
        assertEquals(List.of("_id"), m.on());
        assertEquals(OutputStage.WhenMatched.MERGE, m.whenMatched());
        assertEquals(OutputStage.WhenNotMatched.INSERT, m.whenNotMatched());
        assertTrue(OutputStage.is(BsonDocument.parse("{$out: 'c'}")));
        assertTrue(!OutputStage.is(new BsonArray()));
    }
}
