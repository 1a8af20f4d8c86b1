package dev.fleproxy.rewrite.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/** Duplicate-key errors lose the key that collided where it may hold a policy field (issue 40). */
class DuplicateKeysTest {
    private static final String SERVER = "{ok: 1, n: 0, writeErrors: [{index: 0, code: 11000, errmsg: 'E11000 duplicate"
            + " key error collection: hr.people index: ssn_1_name_1 dup key: { ssn: BinData(6, \"AQID\"), name: \"ann\" }',"
            + " keyPattern: {ssn: 1, name: 1}, keyValue: {ssn: {$binary: {base64: 'AQID', subType: '06'}}, name: 'ann'}}]}";

    private final CollectionPolicy people = new CollectionPolicy("hr.people", UUID.randomUUID(), List.of(), null, false,
            Map.of("ssn", new FieldRule("ssn", true)), EnvelopeBinary.GENERIC, false);

    private static RawBsonDocument raw(String json) {
        return new RawBsonDocument(BsonDocument.parse(json), new BsonDocumentCodec());
    }

    @Test
    void theMessageIsCutBeforeItsKeyAndKeyValueKeepsOnlyFieldsOutsideThePolicy() {
        RawBsonDocument body = raw(SERVER);
        assertTrue(DuplicateKeys.mayHold(body.getByteBuffer().array()));
        BsonDocument out = DuplicateKeys.scrub(body, people);
        BsonDocument e = out.getArray("writeErrors").get(0).asDocument();
        assertEquals("E11000 duplicate key error collection: hr.people index: ssn_1_name_1 (the key is withheld: it "
                + "may hold an encrypted field)", e.getString("errmsg").getValue());
        assertEquals(BsonDocument.parse("{name: 'ann'}"), e.getDocument("keyValue"));
        assertEquals(BsonDocument.parse("{ssn: 1, name: 1}"), e.getDocument("keyPattern"), "names only: kept");
        assertEquals(0, out.getInt32("n").getValue());
    }

    @Test
    void aBulkWritesResultsKeepOnlyTheId() {
        BsonDocument body = BsonDocument.parse("{ok: 1, nErrors: 1, cursor: {id: 0, firstBatch: [{ok: 0, idx: 0, "
                + "code: 11000, errmsg: 'E11000 dup key: { x: 1 }', keyValue: {_id: 1, x: 1}}]}}");
        BsonDocument e = DuplicateKeys.scrub(body, null).getDocument("cursor").getArray("firstBatch").get(0).asDocument();
        assertEquals(BsonDocument.parse("{_id: 1}"), e.getDocument("keyValue"));
        assertFalse(e.getString("errmsg").getValue().contains("x: 1"));
    }

    @Test
    void answersWithoutDuplicateKeysAreLeftAsTheyAre() {
        BsonDocument found = BsonDocument.parse("{ok: 1, value: {code: 11000, errmsg: 'data, not an error'}}");
        assertSame(found, DuplicateKeys.scrub(found, people), "a returned document is data");
        assertFalse(DuplicateKeys.mayHold(raw("{ok: 1, n: 1}").getByteBuffer().array()));
    }
}
