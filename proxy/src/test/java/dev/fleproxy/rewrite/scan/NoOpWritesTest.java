package dev.fleproxy.rewrite.scan;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** What the server would find unchanged: the same bytes, as MongoDB's own no-op test. */
class NoOpWritesTest {
    private static final BsonDocument DOC = BsonDocument.parse("{_id: 1, x: 11, s: {a: 1, b: 2}, arr: [{k: 1}]}");

    @Test
    void theSameTypeAndValueIsUnchangedAnotherTypeOrOrderOrAMissingFieldIsAChange() {
        assertTrue(NoOpWrites.unchanged(DOC, "x", BsonDocument.parse("{v: 11}").get("v")));
        assertFalse(NoOpWrites.unchanged(DOC, "x", BsonDocument.parse("{v: 11.0}").get("v")));
        assertFalse(NoOpWrites.unchanged(DOC, "x", BsonDocument.parse("{v: {$numberLong: '11'}}").get("v")));
        assertTrue(NoOpWrites.unchanged(DOC, "s", BsonDocument.parse("{v: {a: 1, b: 2}}").get("v")));
        assertFalse(NoOpWrites.unchanged(DOC, "s", BsonDocument.parse("{v: {b: 2, a: 1}}").get("v")));
        assertFalse(NoOpWrites.unchanged(DOC, "missing", BsonDocument.parse("{v: null}").get("v")));
        assertTrue(NoOpWrites.unchanged(DOC, "s.a", BsonDocument.parse("{v: 1}").get("v")));
    }

    @Test
    void aPathThroughAnArrayIsAlwaysWritten() {
        assertFalse(NoOpWrites.unchanged(DOC, "arr.k", BsonDocument.parse("{v: 1}").get("v")));
    }

    @Test
    void aReplacementByTheDocumentAsItIsIsUnchanged() {
        assertTrue(NoOpWrites.sameReplacement(DOC, BsonDocument.parse("{x: 11, s: {a: 1, b: 2}, arr: [{k: 1}]}")));
        assertTrue(NoOpWrites.sameReplacement(DOC, BsonDocument.parse("{_id: 1, x: 11, s: {a: 1, b: 2}, arr: [{k: 1}]}")));
        assertFalse(NoOpWrites.sameReplacement(DOC, BsonDocument.parse("{s: {a: 1, b: 2}, x: 11, arr: [{k: 1}]}")));
        assertFalse(NoOpWrites.sameReplacement(DOC, BsonDocument.parse("{x: 11}")));
        assertFalse(NoOpWrites.sameReplacement(BsonDocument.parse("{x: 1}"), BsonDocument.parse("{x: 1}")));
    }
}
