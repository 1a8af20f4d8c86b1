package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Equality on a deterministic field matches every numeric form of the value, as the server's own
 * comparison does: the filter asks for the envelope of each form, and an upsert the server
 * carries out still inserts the field its filter names.
 */
class NumericEqualityFilterTest extends FilterFixture {

    /** What the proxy stores for {ssn: value} (extended JSON): the envelope's bytes, in hex. */
    private String stored(String value) {
        BsonDocument body = rewritten(decide(command("{insert: 'people', documents: [{_id: 1, ssn: " + value + "}], "
                + "$db: 'hr'}"))).body();
        return hex(body.getArray("documents").get(0).asDocument().get("ssn"));
    }

    private static String hex(BsonValue envelope) {
        return HexFormat.of().formatHex(envelope(envelope));
    }

    private static Set<String> hexes(BsonArray envelopes) {
        Set<String> out = new HashSet<>();
        envelopes.forEach(e -> out.add(hex(e)));
        assertEquals(envelopes.size(), out.size(), "each envelope once");
        return out;
    }

    private BsonDocument filter(String filter) {
        return rewritten(decide(command("{find: 'people', filter: " + filter + ", $db: 'hr'}"))).body()
                .getDocument("filter");
    }

    @Test
    void aNumberAsksForTheEnvelopeOfEachOfItsForms() {
        BsonDocument f = filter("{ssn: 1}");
        Set<String> asked = hexes(f.getDocument("ssn").getArray("$in"));
        assertEquals(37, asked.size());
        for (String form : List.of("1", "{$numberLong: '1'}", "1.0", "{$numberDouble: '1.0'}",
                "{$numberDecimal: '1'}", "{$numberDecimal: '1.00'}")) {
            assertTrue(asked.contains(stored(form)), form + " is not asked for");
        }
        assertFalse(asked.contains(stored("2")));
        // the same set whichever form the query names
        assertEquals(asked, hexes(filter("{ssn: {$eq: {$numberDecimal: '1.0'}}}").getDocument("ssn").getArray("$in")));
        assertEquals(asked, hexes(filter("{ssn: {$in: [{$numberLong: '1'}, 1.0]}}").getDocument("ssn").getArray("$in")));
    }

    @Test
    void negationsAskForNoneOfTheForms() {
        Set<String> none = hexes(filter("{ssn: {$ne: 2.5}}").getDocument("ssn").getArray("$nin"));
        assertEquals(34, none.size());
        assertTrue(none.contains(stored("2.5")) && none.contains(stored("{$numberDecimal: '2.50'}")));
        assertEquals(none, hexes(filter("{ssn: {$nin: [{$numberDecimal: '2.5'}]}}").getDocument("ssn").getArray("$nin")));
    }

    @Test
    void aStringKeepsItsOneEnvelopeAndItsOperator() {
        assertEquals(stored("'" + SSN + "'"), hex(filter("{ssn: '" + SSN + "'}").get("ssn")));
        BsonDocument ops = filter("{ssn: {$ne: '" + SSN + "', $exists: true}}").getDocument("ssn");
        assertEquals(List.of("$ne", "$exists"), List.copyOf(ops.keySet()));
        assertEquals(stored("'" + SSN + "'"), hex(ops.get("$ne")));
    }

    @Test
    void twoMembershipsOfOneKindInOneConditionBecomeOne() {
        // x == 1 and x in {1.0, 2}: the forms of 1
        BsonDocument both = filter("{ssn: {$eq: 1, $in: [1.0, 2]}}").getDocument("ssn");
        assertEquals(Set.of("$in"), both.keySet());
        assertEquals(hexes(filter("{ssn: 1}").getDocument("ssn").getArray("$in")), hexes(both.getArray("$in")));
        // x != 1 and x not in {2}: none of the forms of either
        BsonDocument neither = filter("{ssn: {$ne: 1, $nin: [2]}}").getDocument("ssn");
        assertEquals(Set.of("$nin"), neither.keySet());
        assertEquals(74, hexes(neither.getArray("$nin")).size());
    }

    private BsonDocument update(String statement) {
        return rewritten(decide(command("{update: 'people', updates: [" + statement + "], $db: 'hr'}"))).body()
                .getArray("updates").get(0).asDocument();
    }

    @Test
    void anUpsertStillInsertsTheFieldItsFilterNames() {
        BsonDocument st = update("{q: {ssn: 1, name: 'a'}, u: {$set: {age: 3}}, upsert: true}");
        BsonDocument u = st.getDocument("u");
        assertEquals(Set.of("ssn"), u.getDocument("$setOnInsert").keySet());
        assertEquals(stored("1"), hex(u.getDocument("$setOnInsert").get("ssn")), "the envelope one equality seeded");
        // the client's own $setOnInsert keeps its fields
        u = update("{q: {ssn: {$eq: 2.5}}, u: {$set: {age: 3}, $setOnInsert: {name: 'b'}}, upsert: true}").getDocument("u");
        assertEquals(List.of("name", "ssn"), List.copyOf(u.getDocument("$setOnInsert").keySet()));
        assertEquals(stored("2.5"), hex(u.getDocument("$setOnInsert").get("ssn")));
    }

    @Test
    void anUpdateThatDecidesTheFieldOrInsertsNothingOfTheFilterIsLeftAsItIs() {
        for (String statement : List.of(
                "{q: {ssn: 1}, u: {$set: {ssn: 5}}, upsert: true}",
                "{q: {ssn: 1}, u: {$unset: {ssn: ''}}, upsert: true}",
                "{q: {ssn: 1}, u: {$set: {age: 3}}}",
                "{q: {ssn: 1}, u: {$set: {age: 3}}, upsert: false}",
                "{q: {ssn: '" + SSN + "'}, u: {$set: {age: 3}}, upsert: true}",
                "{q: {ssn: 1}, u: {age: 3}, upsert: true}")) {
            BsonDocument u = update(statement).getDocument("u");
            assertFalse(u.containsKey("$setOnInsert"), statement);
        }
    }

    @Test
    void aPipelineUpsertSetsTheFieldWhereItIsMissing() {
        BsonArray u = update("{q: {ssn: 1}, u: [{$set: {age: 3}}], upsert: true}").getArray("u");
        assertEquals(2, u.size());
        BsonArray ifNull = u.get(0).asDocument().getDocument("$set").getDocument("ssn").getArray("$ifNull");
        assertEquals("$ssn", ifNull.get(0).asString().getValue());
        assertEquals(stored("1"), hex(ifNull.get(1)));
        assertEquals(BsonDocument.parse("{$set: {age: 3}}"), u.get(1));
    }

    @Test
    void findAndModifyUpsertsToo() {
        BsonDocument body = rewritten(decide(command("{findAndModify: 'people', query: {ssn: 7}, "
                + "update: {$set: {age: 3}}, upsert: true, $db: 'hr'}"))).body();
        assertArrayEquals(envelope(body.getDocument("update").getDocument("$setOnInsert").get("ssn")),
                HexFormat.of().parseHex(stored("7")));
        assertEquals(37, body.getDocument("query").getDocument("ssn").getArray("$in").size());
    }
}
