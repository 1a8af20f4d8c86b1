package dev.fleproxy.rewrite.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** The steps' replies summed as the server sums its statements, with the client's indexes. */
class BatchResultTest {
    @Test
    void aServerRunsReplyIsFoldedInAtTheClientsIndexes() {
        BatchResult r = new BatchResult();
        r.matched(1, 1); // statement 0, the proxy's
        assertFalse(r.fold(BsonDocument.parse("{n: 3, nModified: 1, upserted: [{index: 1, _id: 9}], ok: 1}"), 1));
        assertTrue(r.fold(BsonDocument.parse("{n: 0, nModified: 0, ok: 1, writeErrors: [{index: 0, code: 11000, "
                + "errmsg: 'dup'}], writeConcernError: {code: 64, errmsg: 'wc'}}"), 4));
        r.upserted(5, new org.bson.BsonInt32(10));
        r.commandError(6, BsonDocument.parse("{ok: 0, code: 2, codeName: 'BadValue', errmsg: 'bad'}"));
        assertEquals(BsonDocument.parse("{n: 5, nModified: 2, upserted: [{index: 2, _id: 9}, {index: 5, _id: 10}], "
                + "writeErrors: [{index: 4, code: 11000, errmsg: 'dup'}, {index: 6, code: 2, errmsg: 'bad', "
                + "codeName: 'BadValue'}], writeConcernError: {code: 64, errmsg: 'wc'}, ok: 1}"), r.reply(true));
    }

    @Test
    void aDeletesReplyHasNoNModified() {
        BatchResult r = new BatchResult();
        r.matched(2, 0);
        assertEquals(BsonDocument.parse("{n: 2, ok: 1}"), r.reply(false));
    }
}
