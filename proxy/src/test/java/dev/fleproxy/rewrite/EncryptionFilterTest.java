package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.server.Requests;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import dev.fleproxy.wire.WireMessage;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * The encryption filter on single messages, with keys from an in-memory key source (the
 * integration tests use the real KMS). Covers what the embedded backend cannot run: MongoDB 8.0's
 * bulkWrite, and replies crafted byte by byte.
 */
class EncryptionFilterTest extends FilterFixture {

    @Test
    void commandsOnCollectionsWithoutPolicyPassUntouched() {
        assertSame(RequestDecision.PASS, decide(command("{find: 'plain', filter: {ssn: '" + SSN + "'}, $db: 'hr'}")));
        assertSame(RequestDecision.PASS, decide(command("{insert: 'people', $db: 'other'}",
                new DocumentSequence("documents", List.of(BsonDocument.parse("{ssn: '" + SSN + "'}"))))));
    }

    @Test
    void writesWithNothingToRewritePassUntouched() {
        for (String json : new String[] {
                "{update: 'people', updates: [{q: {name: 'a', 'address.city': 'Oslo'}, u: {$set: {name: 'b'}}, "
                        + "upsert: true}, {q: {_id: 1}, u: {name: 'c', address: {city: 'Oslo'}}}], ordered: true, $db: 'hr'}",
                "{delete: 'people', deletes: [{q: {name: 'a'}, limit: 1}, {q: {}, limit: 0}], $db: 'hr'}",
                "{findAndModify: 'people', query: {name: 'a'}, update: {$inc: {n: 1}}, new: true, $db: 'hr'}",
                "{findAndModify: 'people', query: {name: 'a'}, remove: true, $db: 'hr'}"}) {
            assertSame(RequestDecision.PASS, decide(command(json)), json);
        }
        assertSame(RequestDecision.PASS, decide(command("{bulkWrite: 1, $db: 'admin'}", new DocumentSequence("ops",
                List.of(BsonDocument.parse("{update: 0, filter: {name: 'a'}, updateMods: {$set: {name: 'b'}}}"),
                        BsonDocument.parse("{delete: 0, filter: {name: 'b'}, multi: true}"))), nsInfo("hr.people"))));
    }

    @Test
    void insertedDocumentSequencesAreEncrypted() {
        OpMsg out = rewritten(decide(command("{insert: 'people', $db: 'hr'}", new DocumentSequence("documents",
                List.of(BsonDocument.parse("{_id: 1, ssn: '" + SSN + "', address: {street: 'Main St', city: 'Oslo'}}"))))));
        BsonDocument doc = out.sequences().get(0).documents().get(0);
        assertEquals(new BsonInt32(1), doc.get("_id"));
        assertEquals(EnvelopeBinary.ENCRYPTED, doc.getBinary("ssn").getType());
        envelope(doc.get("ssn"));
        envelope(doc.getDocument("address").get("street"));
        assertEquals("Oslo", doc.getDocument("address").getString("city").getValue());
        assertFalse(containsPlaintext(out, SSN));
        assertFalse(containsPlaintext(out, "Main St"));
    }

    @Test
    void bulkWriteEncryptsOnlyTheOperationsOnPolicyNamespaces() {
        OpMsg out = rewritten(decide(command("{bulkWrite: 1, errorsOnly: false, $db: 'admin'}",
                new DocumentSequence("ops", List.of(
                        BsonDocument.parse("{insert: 0, document: {_id: 1, ssn: '" + SSN + "'}}"),
                        BsonDocument.parse("{insert: 1, document: {_id: 1, ssn: '" + SSN + "'}}"),
                        BsonDocument.parse("{update: 0, filter: {ssn: '" + SSN + "'}, "
                                + "updateMods: {$set: {'address.street': 'Main St'}}, multi: false}"),
                        BsonDocument.parse("{delete: 0, filter: {ssn: {$in: ['" + SSN + "']}}, multi: true}"),
                        BsonDocument.parse("{insert: 2, document: {_id: 2, a: 'Main St', b: {c: 1}}}"))),
                new DocumentSequence("nsInfo", List.of(BsonDocument.parse("{ns: 'hr.people'}"),
                        BsonDocument.parse("{ns: 'other.plain'}"), BsonDocument.parse("{ns: 'hr.all'}"))))));
        List<BsonDocument> ops = out.sequences().stream().filter(s -> s.identifier().equals("ops"))
                .findFirst().orElseThrow().documents();
        byte[] inserted = envelope(ops.get(0).getDocument("document").get("ssn"));
        assertEquals(BsonDocument.parse("{insert: 1, document: {_id: 1, ssn: '" + SSN + "'}}"), ops.get(1));
        // deterministic: the filter's envelope is the stored one, so the server's equality match works
        assertArrayEquals(inserted, envelope(ops.get(2).getDocument("filter").get("ssn")));
        envelope(ops.get(2).getDocument("updateMods").getDocument("$set").get("address.street"));
        assertArrayEquals(inserted, envelope(ops.get(3).getDocument("filter").getDocument("ssn").getArray("$in").get(0)));
        BsonDocument all = ops.get(4).getDocument("document");
        assertEquals(new BsonInt32(2), all.get("_id"));
        envelope(all.get("a"));
        envelope(all.get("b"));
        // the plain namespace's copy is the only plaintext SSN left in the message
        String wire = new String(WireIO.encode(out, 1, 0), StandardCharsets.ISO_8859_1);
        assertEquals(wire.indexOf(SSN), wire.lastIndexOf(SSN));
    }

    @Test
    void bulkWriteWithAnOperatorThatCannotWorkOnCiphertextIsRefusedWhole() {
        BsonDocument err = refusal(decide(command("{bulkWrite: 1, $db: 'admin'}",
                new DocumentSequence("ops", List.of(
                        BsonDocument.parse("{insert: 0, document: {_id: 3, ssn: '" + SSN + "'}}"),
                        BsonDocument.parse("{update: 0, filter: {_id: 3}, updateMods: {$inc: {ssn: 1}}}"))),
                new DocumentSequence("nsInfo", List.of(BsonDocument.parse("{ns: 'hr.people'}"))))));
        assertEquals(0.0, err.getNumber("ok").doubleValue());
        assertEquals(9720010, err.getInt32("code").getValue());
        assertEquals("FleProxyUnsupportedOnEncryptedField", err.getString("codeName").getValue());
        String msg = err.getString("errmsg").getValue();
        assertTrue(msg.contains("hr.people") && msg.contains("'ssn'"), msg);
    }

    @Test
    void allDigitTopLevelFieldsOfAnEveryFieldPolicyAreNeverWrittenInPlaintext() {
        // "2024" is a top-level field like any other under fields: "*"; a path into it must be
        // inside its envelope, not taken for an array index and skipped.
        for (String update : new String[] {"{$set: {'2024.0': '" + SSN + "'}}", "{$push: {'2024.0': '" + SSN + "'}}",
                "{$set: {'7.x.1': '" + SSN + "'}}"}) {
            BsonDocument err = refusal(decide(command("{update: 'all', updates: [{q: {_id: 1}, u: " + update + "}], $db: 'hr'}")));
            assertEquals(9720010, err.getInt32("code").getValue(), update);
        }
        BsonDocument err = refusal(decide(command("{aggregate: 'all', pipeline: [{$match: {'2024.0': 'x'}}, "
                + "{$facet: {a: [{$limit: 1}]}}], cursor: {}, $db: 'hr'}")));
        assertTrue(err.getString("errmsg").getValue().contains("'2024'"), err.toJson());
        // a find evaluates it in the proxy: the server gets no condition on it
        OpMsg find = rewritten(decide(command("{find: 'all', filter: {'2024.0': 'x'}, $db: 'hr'}")));
        assertEquals(new BsonDocument(), find.body().getDocument("filter"));
        OpMsg out = rewritten(decide(command("{update: 'all', updates: [{q: {_id: 1}, u: {$set: {'2024': '" + SSN + "'}}}], $db: 'hr'}")));
        assertFalse(containsPlaintext(out, SSN));
    }

    private void assertRefusedOn(String field, int code, WireMessage m) {
        BsonDocument err = refusal(decide(m));
        String msg = err.getString("errmsg").getValue();
        assertEquals(code, err.getInt32("code").getValue(), msg);
        assertTrue(msg.startsWith("mongo-fle-proxy: ") && msg.contains("hr.") && msg.contains(field), msg);
    }

    private static DocumentSequence nsInfo(String... namespaces) {
        return new DocumentSequence("nsInfo", Arrays.stream(namespaces)
                .map(ns -> new BsonDocument("ns", new BsonString(ns))).toList());
    }

    @Test
    void arrayFiltersOnEncryptedPathsAreRefusedInEveryKindOfUpdate() {
        String set = "{$set: {'items.$[e].price': 7}}";
        // filters on the encrypted field itself (9720010), or on the element holding it (9720011)
        for (String filters : new String[] {"[{'e.price': 5}]", "[{'e.price': {$gt: 5}}]",
                "[{'e.sku': 'a'}, {'f.price': 5}]", "[{$or: [{'e.sku': 'a'}, {'e.price': 5}]}]",
                "[{e: {price: 5}}]", "[{e: {$elemMatch: {price: 5}}}]"}) {
            String fset = filters.contains("'f.") ? "{$set: {'items.$[e].price': 7, 'items.$[f].sku': 'b'}}" : set;
            boolean element = filters.startsWith("[{e:");
            String field = element ? "'items.$[e]', which holds encrypted fields" : "'items.price'";
            int code = element ? 9720011 : 9720010;
            assertRefusedOn(field, code, command("{update: 'people', updates: [{q: {_id: 1}, u: " + fset
                    + ", arrayFilters: " + filters + "}], $db: 'hr'}"));
            assertRefusedOn(field, code, command("{findAndModify: 'people', query: {_id: 1}, update: " + fset
                    + ", arrayFilters: " + filters + ", $db: 'hr'}"));
            assertRefusedOn(field, code, command("{bulkWrite: 1, $db: 'admin'}", new DocumentSequence("ops",
                    List.of(BsonDocument.parse("{update: 0, filter: {_id: 1}, updateMods: " + fset + ", arrayFilters: "
                            + filters + "}"))), nsInfo("hr.people")));
        }
        // a path into the elements of an encrypted array, and a filter on a deterministic field: refused too
        assertRefusedOn("ssn", 9720010, command("{update: 'people', updates: [{q: {_id: 1}, u: {$set: {'ssn.$[s]': 1}}, "
                + "arrayFilters: [{s: 1}]}], $db: 'hr'}"));
    }

    @Test
    void arrayFiltersWhoseIdentifierNoUpdatePathUsesAreRefused() {
        assertRefusedOn("'x'", 9720011, command("{update: 'people', updates: [{q: {_id: 1}, u: {$set: "
                + "{'items.$[e].sku': 'b'}}, arrayFilters: [{'e.sku': 'a'}, {'x.price': 5}]}], $db: 'hr'}"));
        assertRefusedOn("arrayFilters", 9720011, command("{update: 'people', updates: [{q: {_id: 1}, u: [{$set: {a: 1}}], "
                + "arrayFilters: [{'e.price': 5}]}], $db: 'hr'}"));
        assertRefusedOn("arrayFilters", 9720011, command("{findAndModify: 'people', query: {_id: 1}, update: "
                + "{$set: {'items.$[e].sku': 'b'}}, arrayFilters: {'e.price': 5}, $db: 'hr'}"));
    }

    @Test
    void arrayFiltersOnUnencryptedPathsPassAndTheUpdateIsStillEncrypted() {
        OpMsg out = rewritten(decide(command("{update: 'people', updates: [{q: {_id: 1}, u: {$set: "
                + "{'items.$[e].price': 7, 'items.$[e].note': 'n', 'address.lines.$[l]': 'x'}}, "
                + "arrayFilters: [{'e.sku': {$in: ['a', 'b']}}, {l: {$ne: ''}}]}], $db: 'hr'}")));
        BsonDocument st = out.body().getArray("updates").get(0).asDocument();
        envelope(st.getDocument("u").getDocument("$set").get("items.$[e].price"));
        assertEquals(BsonDocument.parse("{a: [{'e.sku': {$in: ['a', 'b']}}, {l: {$ne: ''}}]}").getArray("a"),
                st.getArray("arrayFilters"));
        assertSame(RequestDecision.PASS, decide(command("{update: 'plain', updates: [{q: {}, u: {$set: "
                + "{'items.$[e].price': 7}}, arrayFilters: [{'e.price': 5}]}], $db: 'hr'}")));
    }

    @Test
    void commandsFromDatabasesWithoutPolicyThatReachAnEncryptedCollectionAreRefused() {
        for (String stage : new String[] {
                "{$merge: {into: {db: 'hr', coll: 'people'}}}",
                "{$out: {db: 'hr', coll: 'people'}}",
                "{$lookup: {from: {db: 'hr', coll: 'people'}, localField: 'a', foreignField: 'b', as: 'p'}}",
                "{$graphLookup: {from: {db: 'hr', coll: 'all'}, startWith: '$a', connectFromField: 'a', "
                        + "connectToField: 'b', as: 'g'}}",
                "{$unionWith: {db: 'hr', coll: 'people'}}",
                "{$facet: {f: [{$lookup: {from: 'x', pipeline: [{$unionWith: {db: 'hr', coll: 'people', pipeline: []}}], "
                        + "as: 'y'}}]}}"}) {
            String pipe = "[{$match: {a: 1}}, " + stage + "]";
            assertRefusedOn("hr.", 9720011, command("{aggregate: 'src', pipeline: " + pipe + ", cursor: {}, $db: 'other'}"));
            assertRefusedOn("hr.", 9720011, command("{aggregate: 1, pipeline: " + pipe + ", cursor: {}, $db: 'admin'}"));
            assertRefusedOn("hr.", 9720011, command("{explain: {aggregate: 'src', pipeline: " + pipe + ", cursor: {}}, "
                    + "$db: 'other'}"));
            // in a database with policies, from a collection without one
            assertRefusedOn("hr.", 9720011, command("{aggregate: 'plain', pipeline: " + pipe + ", cursor: {}, $db: 'hr'}"));
        }
        // a stage document with more than one key: every key is looked at
        assertRefusedOn("hr.people", 9720011, command("{aggregate: 'src', pipeline: [{$match: {}, "
                + "$merge: {into: {db: 'hr', coll: 'people'}}}], cursor: {}, $db: 'other'}"));
        assertRefusedOn("hr.people", 9720011, command("{mapReduce: 'src', map: 'function(){}', reduce: 'function(){}', "
                + "out: {replace: 'people', db: 'hr'}, $db: 'other'}"));
        assertRefusedOn("hr.people", 9720011, command("{applyOps: [{op: 'i', ns: 'hr.people', o: {_id: 1, ssn: '"
                + SSN + "'}}], $db: 'admin'}"));
        BsonDocument err = refusal(decide(command("{applyOps: [{op: 'i', ns: 'other.x', o: {_id: 1}}], $db: 'admin'}")));
        assertEquals(9720011, err.getInt32("code").getValue());
    }

    @Test
    void legacyCommandsAreRefusedWhateverTheirDatabase() {
        // OP_QUERY carries only the handshake while collections are encrypted (the admission gate)
        for (String query : new String[] {"{aggregate: 'src', pipeline: [{$merge: {into: {db: 'hr', coll: 'people'}}}], "
                + "cursor: {}}", "{aggregate: 'src', pipeline: [{$merge: {into: 'dst'}}], cursor: {}}"}) {
            OpQuery q = new OpQuery(0, "other.$cmd", 0, -1, BsonDocument.parse(query), null);
            OpReply reply = (OpReply) assertInstanceOf(RequestDecision.Refuse.class, decide(q)).reply();
            BsonDocument err = reply.documents().get(0);
            assertEquals(9720011, err.getInt32("code").getValue());
            assertTrue(err.getString("errmsg").getValue().contains("only for the handshake"), err.toJson());
        }
    }

    @Test
    void crossReferencesToCollectionsWithoutPolicyPassUntouched() {
        for (String json : new String[] {
                "{aggregate: 'src', pipeline: [{$merge: {into: {db: 'hr', coll: 'plain'}}}], cursor: {}, $db: 'other'}",
                "{aggregate: 'src', pipeline: [{$lookup: {from: 'people', localField: 'a', foreignField: 'b', as: 'p'}}], "
                        + "cursor: {}, $db: 'other'}",
                "{aggregate: 1, pipeline: [{$documents: [{a: 1}]}, {$out: {db: 'other', coll: 'people'}}], cursor: {}, "
                        + "$db: 'admin'}",
                "{mapReduce: 'src', map: 'function(){}', reduce: 'function(){}', out: {inline: 1}, $db: 'other'}"}) {
            assertSame(RequestDecision.PASS, decide(command(json)), json);
        }
    }

    @Test
    void storedFiltersThatMentionEncryptedFieldsAreRefused() {
        // a partial index's filter and a validator are stored by the server: no plaintext, no envelope
        for (String partial : new String[] {"{ssn: '" + SSN + "'}", "{ssn: {$in: ['" + SSN + "']}}",
                "{'address.street': {$gt: 'M'}}", "{$and: [{name: 'x'}, {ssn: '" + SSN + "'}]}",
                "{'items.price': {$type: 'number'}}"}) {
            OpMsg m = command("{createIndexes: 'people', indexes: [{key: {name: 1}, name: 'n'}, {key: {name: 1, ssn: 1}, "
                    + "name: 'p', partialFilterExpression: " + partial + "}], $db: 'hr'}");
            assertRefusedOn("partialFilterExpression", 9720010, m);
        }
        assertRefusedOn("address", 9720011, command("{createIndexes: 'people', indexes: [{key: {name: 1}, name: 'p', "
                + "partialFilterExpression: {address: {street: 'Main St'}}}], $db: 'hr'}"));
        for (String validator : new String[] {"{ssn: {$type: 'string'}}", "{ssn: '" + SSN + "'}",
                "{$or: [{name: {$exists: true}}, {'address.street': {$in: ['Main St']}}]}",
                "{$expr: {$eq: ['$ssn', '" + SSN + "']}}"}) {
            assertRefusedOn("validator", 9720010, command("{create: 'people', validator: " + validator + ", $db: 'hr'}"));
            assertRefusedOn("validator", 9720010, command("{collMod: 'people', validator: " + validator + ", $db: 'hr'}"));
        }
        assertRefusedOn("$jsonSchema", 9720011, command("{collMod: 'people', validator: {$jsonSchema: {required: "
                + "['name'], properties: {ssn: {enum: ['" + SSN + "']}}}}, $db: 'hr'}"));
        assertRefusedOn("view", 9720011, command("{create: 'people', viewOn: 'plain', pipeline: [{$match: {ssn: '"
                + SSN + "'}}], $db: 'hr'}"));
        assertRefusedOn("indexes", 9720011, command("{createIndexes: 'people', indexes: {key: {ssn: 1}}, $db: 'hr'}"));
    }

    @Test
    void indexesOnEncryptedFieldsAndFiltersWithoutTheirValuesPass() {
        for (String json : new String[] {
                "{createIndexes: 'people', indexes: [{key: {ssn: 1}, name: 's', unique: true, "
                        + "partialFilterExpression: {ssn: {$exists: true}}}], $db: 'hr'}",
                "{createIndexes: 'people', indexes: [{key: {'address.street': 1}, name: 'a', "
                        + "partialFilterExpression: {'address.city': 'Oslo', age: {$gt: 3}}}], $db: 'hr'}",
                "{createIndexes: 'all', indexes: [{key: {a: 1}, name: 'a'}], $db: 'hr'}",
                "{create: 'people', validator: {name: {$type: 'string'}, ssn: {$exists: true}}, $db: 'hr'}",
                "{collMod: 'people', validator: {$expr: {$gt: ['$age2', 1]}}, validationLevel: 'moderate', $db: 'hr'}",
                "{collMod: 'people', index: {keyPattern: {ssn: 1}, hidden: true}, $db: 'hr'}",
                "{create: 'people', $db: 'hr'}"}) {
            assertSame(RequestDecision.PASS, decide(command(json)), json);
        }
    }

    @Test
    void updateStatementSortsOnEncryptedFieldsAreRefused() {
        // MongoDB 8.0: updateOne's sort picks the document to update; on ciphertext it would pick wrongly
        assertRefusedOn("'ssn'", 9720010, command("{update: 'people', updates: [{q: {}, u: {$set: {name: 'x'}}, "
                + "sort: {name: 1, ssn: -1}}], $db: 'hr'}"));
        assertRefusedOn("'address.street'", 9720010, command("{bulkWrite: 1, $db: 'admin'}", new DocumentSequence("ops",
                List.of(BsonDocument.parse("{update: 0, filter: {}, updateMods: {$set: {name: 'x'}}, "
                        + "sort: {'address.street': 1}}"))), nsInfo("hr.people")));
        assertRefusedOn("'items.price'", 9720010, command("{update: 'people', updates: [{q: {}, u: {name: 'x'}, "
                + "sort: {'items.0.price': 1}}], $db: 'hr'}"));
        assertSame(RequestDecision.PASS, decide(command("{update: 'people', updates: [{q: {name: 'a'}, "
                + "u: {$set: {name: 'x'}}, sort: {name: 1, 'address.city': 1}}], $db: 'hr'}")));
    }

    @Test
    void malformedCommandsOnEncryptedCollectionsAreRefusedNotForwardedUnexamined() {
        String[] malformed = {
            // logical operators without an array of documents
            "{find: 'people', filter: {$or: {ssn: '" + SSN + "'}}, $db: 'hr'}",
            "{find: 'people', filter: {$and: ['" + SSN + "']}, $db: 'hr'}",
            "{count: 'people', query: {$nor: {ssn: '" + SSN + "'}}, $db: 'hr'}",
            "{delete: 'people', deletes: [{q: {$or: {ssn: '" + SSN + "'}}, limit: 1}], $db: 'hr'}",
            // filters that are not documents
            "{find: 'people', filter: ['" + SSN + "'], $db: 'hr'}",
            "{update: 'people', updates: [{q: '" + SSN + "', u: {$set: {name: 'a'}}}], $db: 'hr'}",
            "{findAndModify: 'people', query: ['" + SSN + "'], remove: true, $db: 'hr'}",
            // update operators whose argument is not a document, updates that are neither, mixed ones
            "{update: 'people', updates: [{q: {}, u: {$set: ['ssn', '" + SSN + "']}}], $db: 'hr'}",
            "{findAndModify: 'people', query: {}, update: {$set: '" + SSN + "'}, $db: 'hr'}",
            "{update: 'people', updates: [{q: {}, u: '" + SSN + "'}], $db: 'hr'}",
            "{update: 'people', updates: [{q: {}, u: {name: 'a', $set: {ssn: '" + SSN + "'}}}], $db: 'hr'}",
            "{update: 'people', updates: [{q: {}, u: {$set: {name: 'a'}, ssn: '" + SSN + "'}}], $db: 'hr'}",
            // statements and pipeline stages that are not documents, stages with several keys
            "{update: 'people', updates: ['" + SSN + "'], $db: 'hr'}",
            "{insert: 'people', documents: ['" + SSN + "'], $db: 'hr'}",
            "{aggregate: 'people', pipeline: [{$match: {}}, '" + SSN + "'], cursor: {}, $db: 'hr'}",
            "{aggregate: 'people', pipeline: [{$limit: 1, $match: {ssn: '" + SSN + "'}}], cursor: {}, $db: 'hr'}",
            "{aggregate: 'people', pipeline: [{$limit: 1}, {$match: ['" + SSN + "']}], cursor: {}, $db: 'hr'}",
            "{aggregate: 'people', pipeline: {$match: {ssn: '" + SSN + "'}}, cursor: {}, $db: 'hr'}",
            "{update: 'people', updates: [{q: {}, u: [{$set: {name: 'a'}}, '" + SSN + "']}], $db: 'hr'}",
            "{update: 'people', updates: [{q: {}, u: [{$set: {name: 'a'}, $unset: 'x'}]}], $db: 'hr'}",
        };
        for (String json : malformed) {
            RequestDecision d = decide(command(json));
            assertInstanceOf(RequestDecision.Refuse.class, d, json);
            String msg = refusal(d).getString("errmsg").getValue();
            assertTrue(msg.startsWith("mongo-fle-proxy: hr.people: "), msg);
        }
        BsonDocument err = refusal(decide(command("{bulkWrite: 1, $db: 'admin'}", new DocumentSequence("ops",
                List.of(BsonDocument.parse("{insert: '0', document: {ssn: '" + SSN + "'}}"))), nsInfo("hr.people"))));
        assertEquals(9720011, err.getInt32("code").getValue());
    }

    @Test
    void predicatesOnRandomizedFieldsAreRefusedWhereTheProxyDoesNotEvaluate() {
        BsonDocument err = refusal(decide(command("{aggregate: 'people', pipeline: [{$match: {'address.street': 'Main St'}}, "
                + "{$facet: {a: [{$limit: 1}]}}], cursor: {}, $db: 'hr'}")));
        assertEquals(9720010, err.getInt32("code").getValue());
        assertTrue(err.getString("errmsg").getValue().contains("address.street"));
    }

    @Test
    void aFindTheServerCannotEvaluateAsksItForCandidatesOnly() {
        OpMsg out = rewritten(decide(command("{find: 'people', filter: {name: 'n', 'address.street': 'Main St'}, "
                + "sort: {'address.street': 1}, projection: {name: 1}, skip: 1, limit: 2, comment: 'c', $db: 'hr'}")));
        BsonDocument body = out.body();
        assertEquals(BsonDocument.parse("{name: 'n'}"), body.getDocument("filter"));
        assertFalse(body.containsKey("sort") || body.containsKey("projection") || body.containsKey("skip"), body.toJson());
        assertEquals(10_001, body.getInt32("limit").getValue());
        assertEquals("c", body.getString("comment").getValue());
        assertFalse(body.toJson().contains("Main St"), "no residual constant reaches the server");
    }

    @Test
    void repliesAreDecryptedAndTamperedEnvelopesFailTheCommand() {
        OpMsg insert = rewritten(decide(command("{insert: 'people', $db: 'hr', documents: [{_id: 1, ssn: '" + SSN + "'}]}")));
        BsonBinary stored = insert.body().getArray("documents").get(0).asDocument().getBinary("ssn");

        Request find = Requests.admitted(command("{find: 'people', filter: {}, $db: 'hr'}"), filter, POLICY);
        assertSame(RequestDecision.PASS, filter.onRequest(find));
        Object state = Requests.replyStates(find).get(0);

        OpMsg reply = new OpMsg(0, new BsonDocument("cursor", new BsonDocument("firstBatch",
                new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1)).append("ssn", stored))))
                .append("id", new BsonInt64(0)).append("ns", new BsonString("hr.people")))
                .append("ok", new BsonInt32(1)));
        BsonDocument decrypted = replied(filter.onReply(Requests.replyOf(reply), state));
        assertEquals(BsonDocument.parse("{_id: 1, ssn: '" + SSN + "'}"),
                decrypted.getDocument("cursor").getArray("firstBatch").get(0));

        byte[] tampered = stored.getData().clone();
        tampered[tampered.length - 1] ^= 1;
        OpMsg bad = new OpMsg(0, new BsonDocument("cursor", new BsonDocument("firstBatch",
                new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1))
                        .append("ssn", new BsonBinary(stored.getType(), tampered)))))
                .append("id", new BsonInt64(0)).append("ns", new BsonString("hr.people")))
                .append("ok", new BsonInt32(1)));
        BsonDocument err = replied(filter.onReply(Requests.replyOf(bad), state));
        assertEquals(9720021, err.getInt32("code").getValue());
        assertTrue(err.getString("errmsg").getValue().contains("'ssn'"));
    }

    private static OpMsg batch(String batchName, long id, BsonDocument... docs) {
        return new OpMsg(0, new BsonDocument("cursor", new BsonDocument(batchName, new BsonArray(List.of(docs)))
                .append("id", new BsonInt64(id)).append("ns", new BsonString("hr.people")))
                .append("ok", new BsonInt32(1)));
    }

    @Test
    void anEnvelopeUnderAKeyOutsideTheCollectionsKeysFailsWithoutAskingTheKms() {
        UUID foreign = UUID.fromString("99999999-8888-7777-6666-555555555555");
        byte[] env = envelope(rewritten(decide(command("{insert: 'people', $db: 'hr', documents: [{_id: 1, ssn: '"
                + SSN + "'}]}"))).body().getArray("documents").get(0).asDocument().get("ssn"));
        java.nio.ByteBuffer.wrap(env, 2, 16).putLong(foreign.getMostSignificantBits())
                .putLong(foreign.getLeastSignificantBits());
        Request find = Requests.admitted(command("{find: 'people', filter: {}, $db: 'hr'}"), filter, POLICY);
        filter.onRequest(find);
        BsonDocument err = replied(filter.onReply(Requests.replyOf(batch("firstBatch", 0,
                new BsonDocument("_id", new BsonInt32(1)).append("ssn", new BsonBinary((byte) 6, env)))),
                Requests.replyStates(find).get(0)));
        assertEquals(9720021, err.getInt32("code").getValue(), err.toJson());
        assertTrue(err.getString("errmsg").getValue().contains("previousKeys"), err.toJson());
        assertFalse(FETCHED.contains(foreign), "a forged header makes the proxy fetch nothing");
    }

    @Test
    void aGetMoreReadsItsBatchWithTheShapeOfTheAggregateThatOpenedIt() {
        BsonValue stored = rewritten(decide(command("{insert: 'people', $db: 'hr', documents: [{_id: 1, ssn: '"
                + SSN + "'}]}"))).body().getArray("documents").get(0).asDocument().get("ssn");
        Request agg = Requests.admitted(command("{aggregate: 'people', pipeline: [{$project: {who: '$ssn', ssn: "
                + "'$name'}}], cursor: {batchSize: 0}, $db: 'hr'}"), filter, POLICY);
        filter.onRequest(agg);
        assertFalse(replied(filter.onReply(Requests.replyOf(batch("firstBatch", 42,
                new BsonDocument("_id", new BsonInt32(0)).append("who", stored))), Requests.replyStates(agg).get(0)))
                .toJson().contains("$binary"));

        Request more = Requests.admitted(command("{getMore: {$numberLong: '42'}, collection: 'people', $db: 'hr'}"), filter, POLICY);
        assertSame(RequestDecision.PASS, filter.onRequest(more));
        BsonDocument doc = replied(filter.onReply(Requests.replyOf(batch("nextBatch", 0,
                new BsonDocument("_id", new BsonInt32(1)).append("who", stored).append("ssn", stored))),
                Requests.replyStates(more).get(0))).getDocument("cursor").getArray("nextBatch").get(0).asDocument();
        assertEquals(SSN, doc.getString("who").getValue(), "the copy is decrypted where it landed");
        assertEquals(stored, doc.get("ssn"), "ssn was given a plain field's value: whatever is there is returned as stored");

        // exhausted: forgotten, and a cursor never seen is refused
        BsonDocument err = refusal(decide(command("{getMore: {$numberLong: '42'}, collection: 'people', $db: 'hr'}")));
        assertEquals(9720011, err.getInt32("code").getValue());
        assertTrue(err.getString("errmsg").getValue().contains("did not open"), err.toJson());
    }

    /** A find whose filter names ssn twice, as raw bytes (parsers keep only one of the two). */
    private static OpMsg findWithSsnTwice() {
        org.bson.io.BasicOutputBuffer out = new org.bson.io.BasicOutputBuffer();
        try (org.bson.BsonBinaryWriter w = new org.bson.BsonBinaryWriter(out)) {
            w.writeStartDocument();
            w.writeString("find", "people");
            w.writeStartDocument("filter");
            w.writeString("ssn", SSN);
            w.writeStartDocument("ssn");
            w.writeBoolean("$exists", true);
            w.writeEndDocument();
            w.writeEndDocument();
            w.writeString("$db", "hr");
            w.writeEndDocument();
        }
        return new OpMsg(0, new org.bson.RawBsonDocument(out.toByteArray()));
    }

    @Test
    void aFieldGivenTwiceIsRefusedNotGuessed() {
        BsonDocument err = refusal(decide(findWithSsnTwice()));
        assertEquals(9720010, err.getInt32("code").getValue());
        assertTrue(err.getString("errmsg").getValue().contains("'filter.ssn' is given twice"), err.toJson());
        assertFalse(err.toJson().contains(SSN), "the refusal never carries the value");
    }

    @Test
    void aFindOnPlainFieldsPassesUndecodedAndItsReplyIsStillDecrypted() {
        for (String json : new String[] {"{find: 'people', filter: {_id: 1}, limit: 1, $db: 'hr'}",
                "{find: 'people', filter: {name: 'a', 'address.city': 'Oslo'}, $db: 'hr'}",
                "{find: 'all', filter: {_id: {$in: [1, 2]}}, batchSize: 5, $db: 'hr'}"}) {
            Request r = Requests.admitted(command(json), filter, POLICY);
            assertSame(RequestDecision.PASS, filter.onRequest(r), json);
            assertEquals(1, Requests.replyStates(r).size(), "the reply is still decrypted: " + json);
        }
        // anything touching an encrypted field, or not plainly a field, takes the full examination
        for (String json : new String[] {"{find: 'people', filter: {ssn: '" + SSN + "'}, $db: 'hr'}",
                "{find: 'all', filter: {name: 'a'}, $db: 'hr'}",
                "{find: 'people', filter: {_id: 1}, sort: {ssn: 1}, $db: 'hr'}",
                "{find: 'people', filter: {$or: [{ssn: 'x'}]}, $db: 'hr'}",
                "{find: 'people', filter: {'items.price': 5}, $db: 'hr'}"}) {
            RequestDecision d = decide(command(json));
            assertFalse(d == RequestDecision.PASS, json);
        }
    }
}
