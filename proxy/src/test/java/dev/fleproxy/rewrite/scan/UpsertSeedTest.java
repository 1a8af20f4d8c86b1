package dev.fleproxy.rewrite.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fleproxy.protocol.Refusal;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * The document an upsert that matched nothing starts from, by MongoDB's rules (where the embedded
 * backend departs from them — a one-element $in, an $eq beside other operators — MongoDB's).
 */
class UpsertSeedTest {
    private static BsonDocument seed(String filter) {
        return dev.fleproxy.rewrite.query.UpsertEqualities.of(BsonDocument.parse(filter), "app.c");
    }

    @Test
    void plainValuesAndEqSeedTheDocumentOtherConditionsDoNot() {
        assertEquals(BsonDocument.parse("{a: 1, b: 'x', c: {d: 2}, e: [1, 2]}"),
                seed("{a: 1, b: {$eq: 'x'}, c: {d: 2}, e: [1, 2], f: {$gt: 3}, g: /re/, h: {$in: [1, 2]}}"));
    }

    @Test
    void andOneClauseOrEqBesideOtherOperatorsAndOneElementInSeedAsInMongoDb() {
        assertEquals(BsonDocument.parse("{a: 1, b: 2, c: 3, d: 4}"),
                seed("{$and: [{a: 1}, {$and: [{b: 2}]}], $or: [{c: 3}], d: {$eq: 4, $gt: 0}}"));
        assertEquals(BsonDocument.parse("{a: 5}"), seed("{a: {$in: [5]}, $or: [{b: 1}, {c: 2}], $nor: [{d: 1}]}"));
    }

    @Test
    void dottedPathsNest() {
        assertEquals(BsonDocument.parse("{a: {b: 1, c: 2}, _id: 7}"),
                UpsertSeed.document(seed("{'a.b': 1, 'a.c': 2, _id: 7}")));
    }

    @Test
    void aPathTwiceOrOneUnderAnotherIsRefusedAsTheServerRefusesIt() {
        assertThrows(Refusal.class, () -> seed("{a: 1, $and: [{a: 1}]}"));
        assertThrows(Refusal.class, () -> seed("{a: {b: 1}, 'a.c': 2}"));
    }

    @Test
    void theServersFilterMatchesNoDocumentAndCarriesTheEqualities() {
        assertEquals(BsonDocument.parse("{$and: [{_id: {$exists: false}}, {a: {$eq: 1}}]}"),
                UpsertSeed.serverFilter(BsonDocument.parse("{a: 1}")));
    }
}
