package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.OpMsg;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

/**
 * Nothing the proxy has not examined reaches the server on an encrypted namespace: arguments,
 * document sequences and commands the command table does not know, comments, names it cannot
 * read, let variables that carry a document of the encrypted collection (issue 26's findings).
 */
class FailClosedTest extends FilterFixture {

    private BsonDocument refused(String json, int code) {
        BsonDocument reply = refusal(decide(command(json)));
        assertEquals(code, reply.getInt32("code").getValue(), reply.toJson());
        assertFalse(reply.toJson().contains(SSN), "the reply never carries the value: " + reply.toJson());
        return reply;
    }

    private static String errmsg(BsonDocument reply) {
        return reply.getString("errmsg").getValue();
    }

    @Test
    void anArgumentTheTableDoesNotKnowIsRefusedByName() {
        BsonDocument reply = refused("{find: 'people', filteX: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720011);
        assertTrue(errmsg(reply).contains("'filteX'"), errmsg(reply));
        refused("{insert: 'people', documents: [{ssn: '1'}], bogusArg: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720011);
        // the same argument on a collection no policy names is the server's business
        assertSame(RequestDecision.PASS, decide(command("{find: 'plain', filteX: {ssn: '" + SSN + "'}, $db: 'hr'}")));
    }

    @Test
    void everyCommandForwardedOnAnEncryptedCollectionRefusesAnUnknownArgument() {
        int checked = 0;
        for (CommandSpec spec : CommandTable.all()) {
            if (spec.onEncrypted() == CommandSpec.OnEncrypted.REFUSE) {
                continue;
            }
            String json = switch (spec.scope()) {
                case COLLECTION -> "{" + spec.name() + ": 'people', $db: 'hr', bogusArg: 1}";
                case NAMESPACE -> "{" + spec.name() + ": 'hr.people', $db: 'admin', bogusArg: 1}";
                case CURSOR -> "{" + spec.name() + ": NumberLong(5), collection: 'people', $db: 'hr', bogusArg: 1}";
                case NAMESPACES -> "{" + spec.name() + ": 1, ops: [], nsInfo: [{ns: 'hr.people'}], $db: 'admin', "
                        + "bogusArg: 1}";
                default -> null;
            };
            if (json == null) {
                continue;
            }
            BsonDocument reply = refused(json, 9720011);
            assertTrue(errmsg(reply).contains("'bogusArg'"), spec.name() + ": " + errmsg(reply));
            checked++;
        }
        assertTrue(checked > 30, "commands checked: " + checked);
    }

    /**
     * A command that names no collection, sent to a database with encrypted collections or to admin: an
     * argument its row does not list is refused there too, for every such command in the table (those
     * whose row takes arguments by the server's own names take no document under an unlisted one).
     */
    @Test
    void everyWholeDatabaseCommandRefusesAnArgumentItsRowDoesNotList() {
        int checked = 0;
        for (CommandSpec spec : CommandTable.all()) {
            boolean wholeDatabase = spec.scope() == CommandSpec.Scope.SERVER || spec.scope() == CommandSpec.Scope.DATABASE
                    || spec.scope() == CommandSpec.Scope.CONNECTION;
            if (!wholeDatabase || spec.onEncrypted() == CommandSpec.OnEncrypted.REFUSE) {
                continue;
            }
            for (String db : new String[] {"hr", "admin"}) {
                // a row that takes arguments by the server's names takes a document only if it names no policy field
                String value = spec.others() == null ? "{note: {x: 1}}" : "{note: {ssn: 1}}";
                String json = "{" + spec.name() + ": 1, $db: '" + db + "', bogusArg: " + value + "}";
                RequestDecision d = decide(command(json));
                assertTrue(d instanceof RequestDecision.Refuse, json);
                BsonDocument reply = refusal(d);
                int code = reply.getInt32("code").getValue();
                assertTrue(code == 9720011 || spec.others() != null && code == 9720010, json + ": " + reply.toJson());
                // on a database that holds nothing encrypted, the same passes untouched
                assertSame(RequestDecision.PASS, decide(command(json.replace("$db: '" + db + "'", "$db: 'plaindb'"))),
                        spec.name());
            }
            checked++;
        }
        assertTrue(checked > 100, "commands checked: " + checked);
    }

    /** Settings within settings, and the key pattern of collMod's index, are examined too. */
    @Test
    void nestedSettingsAndKeyPatternsAreExamined() {
        refused("{find: 'people', filter: {_id: 1}, $clusterTime: {clusterTime: Timestamp(1, 1), signature: "
                + "{hash: BinData(0, 'AA=='), keyId: 1, ssn: '" + SSN + "'}}, $db: 'hr'}", 9720011);
        refused("{collMod: 'people', index: {keyPattern: {ssn: '" + SSN + "'}, hidden: true}, $db: 'hr'}", 9720011);
        assertSame(RequestDecision.PASS, decide(command("{collMod: 'people', index: {keyPattern: {ssn: 1}, hidden: "
                + "true}, $db: 'hr'}")));
    }

    /**
     * A policy with fields named as drivers name what they say of themselves (name, version) and as
     * the server names its records: the handshake (with pymongo's speculative SCRAM) and the catalog
     * still pass.
     */
    @Test
    void commonFieldNamesInAPolicyDoNotStopTheHandshakeOrTheCatalog() {
        dev.fleproxy.policy.Policy named = dev.fleproxy.policy.PolicyParser.parse(java.util.Map.of("app.users",
                java.util.Map.of("key", AES_KEY.toString(), "fields", java.util.Map.of("name", java.util.Map.of(),
                        "version", java.util.Map.of(), "payload", java.util.Map.of()))), 6, "test");
        EncryptionFilter f = new EncryptionFilter(() -> named, RESOLVER, java.time.Duration.ofMillis(5000));
        dev.fleproxy.admission.AdmissionGate gate = new dev.fleproxy.admission.AdmissionGate(() -> named);
        for (String json : new String[] {
            "{hello: 1, helloOk: true, client: {application: {name: 'app'}, driver: {name: 'PyMongo', version: '4.1'}, "
                    + "os: {type: 'Linux', name: 'Linux', architecture: 'x86_64', version: '6.1'}, platform: 'CPython'},"
                    + " speculativeAuthenticate: {saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: BinData(0, 'AA=='),"
                    + " autoAuthorize: 1, db: 'admin', options: {skipEmptyExchange: true}}, $db: 'admin'}",
            "{listCollections: 1, filter: {name: 'users'}, nameOnly: true, $db: 'app'}",
            "{listDatabases: 1, filter: {name: 'app'}, nameOnly: true, $db: 'admin'}"}) {
            dev.fleproxy.server.Request r = dev.fleproxy.server.Requests.of(command(json), f);
            assertSame(RequestDecision.PASS, gate.onRequest(r), json);
            assertSame(RequestDecision.PASS, f.onRequest(r), json);
        }
    }

    /** A command, an argument or a stage the table does not know is refused, not forwarded. */
    @Test
    void whatTheTableDoesNotKnowIsRefused() {
        refused("{frobnicate: 'people', $db: 'hr'}", 9720011);
        refused("{find: 'people', newArgument: 1, $db: 'hr'}", 9720011);
        refused("{aggregate: 'people', pipeline: [{$newStage: {}}], cursor: {}, $db: 'hr'}", 9720011);
        refused("{aggregate: 1, pipeline: [{$newSource: {}}], cursor: {}, $db: 'hr'}", 9720011);
        refused("{aggregate: 1, pipeline: [{$currentOp: {}}, {$newStage: {}}], cursor: {}, $db: 'admin'}", 9720011);
        refused("{listCollections: 1, filter: {newField: 1}, $db: 'hr'}", 9720011);
        refused("{ping: 1, newArgument: 1, $db: 'admin'}", 9720011);
    }

    @Test
    void anUnknownDocumentSequenceIsRefused() {
        RequestDecision d = decide(command("{insert: 'people', $db: 'hr'}",
                new DocumentSequence("documentz", List.of(BsonDocument.parse("{ssn: '" + SSN + "'}")))));
        assertEquals(9720011, refusal(d).getInt32("code").getValue());
    }

    @Test
    void settingsAndOptionsHoldOnlyWhatTheServerReadsThere() {
        refused("{find: 'people', $db: 'hr', writeConcern: {w: 1, ssn: '" + SSN + "'}}", 9720011);
        refused("{find: 'people', $db: 'hr', limit: {ssn: '" + SSN + "'}}", 9720011);
        refused("{find: 'people', $db: 'hr', hint: {ssn: '" + SSN + "'}}", 9720011);
        refused("{find: 'people', $db: 'hr', collation: {locale: 'en', x: {ssn: '" + SSN + "'}}}", 9720011);
        // found by fuzzing: a collation field the server does not have, holding a value
        refused("{find: 'people', $db: 'hr', collation: {'items.price': '" + SSN + "'}}", 9720011);
        assertSame(RequestDecision.PASS, decide(command("{find: 'people', filter: {_id: 1}, $db: 'hr', limit: 1, "
                + "hint: {ssn: 1}, collation: {locale: 'en'}, writeConcern: {w: 'majority'}, "
                + "readConcern: {level: 'local'}, lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', "
                + "subType: '04'}}}, $readPreference: {mode: 'primary'}}")));
    }

    @Test
    void aCommentNamingAPolicyFieldIsRefusedAStringPasses() {
        BsonDocument reply = refused("{find: 'people', filter: {_id: 1}, comment: {ssn: '" + SSN + "'}, $db: 'hr'}",
                9720010);
        assertTrue(errmsg(reply).contains("'ssn'"), errmsg(reply));
        refused("{find: 'people', filter: {_id: 1}, comment: [{note: {ssn: '" + SSN + "'}}], $db: 'hr'}", 9720010);
        refused("{insert: 'people', documents: [{a: 1}], comment: {address: {street: 'x'}}, $db: 'hr'}", 9720010);
        assertSame(RequestDecision.PASS, decide(command("{find: 'people', filter: {_id: 1}, comment: 'nightly job', "
                + "$db: 'hr'}")));
        assertSame(RequestDecision.PASS, decide(command("{find: 'people', filter: {_id: 1}, comment: {job: 'n', "
                + "run: 3}, $db: 'hr'}")));
        // every top-level name is a policy field under fields: "*": only strings and _id pass there
        refused("{find: 'all', filter: {_id: 1}, comment: {job: 'n'}, $db: 'hr'}", 9720010);
    }

    @Test
    void namesThatAreNotUtf8AreRefused() {
        // "f\xe9nd": Java would read "f\uFFFDnd", the server sees another name, its log the filter
        byte[] body = utf8Body("{fXnd: 'people', filter: {ssn: '" + SSN + "'}, $db: 'hr'}", "fXnd");
        assertEquals(9720011, refusal(decide(new OpMsg(0, new RawBsonDocument(body)))).getInt32("code").getValue());
        byte[] field = utf8Body("{find: 'people', filter: {sXn: '" + SSN + "'}, $db: 'hr'}", "sXn");
        assertEquals(9720010, refusal(decide(new OpMsg(0, new RawBsonDocument(field)))).getInt32("code").getValue());
        byte[] coll = utf8Body("{find: 'peopXe', filter: {ssn: '" + SSN + "'}, $db: 'hr'}", "peopXe");
        assertEquals(9720011, refusal(decide(new OpMsg(0, new RawBsonDocument(coll)))).getInt32("code").getValue());
        byte[] nested = utf8Body("{find: 'people', filter: {a: {sXn: '" + SSN + "'}}, $db: 'hr'}", "sXn");
        assertEquals(9720010, refusal(decide(new OpMsg(0, new RawBsonDocument(nested)))).getInt32("code").getValue());
    }

    /** The JSON's bytes with the X of {@code marked} replaced by 0xE9, a lone Latin-1 byte: not UTF-8. */
    private static byte[] utf8Body(String json, String marked) {
        org.bson.io.BasicOutputBuffer out = new org.bson.io.BasicOutputBuffer();
        try (org.bson.BsonBinaryWriter w = new org.bson.BsonBinaryWriter(out)) {
            new org.bson.codecs.BsonDocumentCodec().encode(w, BsonDocument.parse(json),
                    org.bson.codecs.EncoderContext.builder().build());
        }
        byte[] bytes = out.toByteArray();
        byte[] mark = marked.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + mark.length <= bytes.length; i++) {
            for (int k = 0; k < mark.length; k++) {
                if (bytes[i + k] != mark[k]) {
                    continue outer;
                }
            }
            bytes[i + marked.indexOf('X')] = (byte) 0xE9;
            return bytes;
        }
        throw new AssertionError(marked + " not found");
    }

    @Test
    void aNameGivenTwiceAtTheTopIsRefusedWhereverTheCommandGoes() {
        // the proxy would read $db 'other' (plain), a server keeping the last one 'hr'
        assertEquals(9720011, refusal(decide(twice("$db", "other", "hr"))).getInt32("code").getValue());
        assertEquals(9720011, refusal(decide(twice("find", "plain", "people"))).getInt32("code").getValue());
    }

    /** {name: first, filter: {ssn: …}, name: second} plus what else a find needs, as raw bytes. */
    private static OpMsg twice(String name, String first, String second) {
        org.bson.io.BasicOutputBuffer out = new org.bson.io.BasicOutputBuffer();
        try (org.bson.BsonBinaryWriter w = new org.bson.BsonBinaryWriter(out)) {
            w.writeStartDocument();
            if (!name.equals("find")) {
                w.writeString("find", "people");
            }
            w.writeString(name, first);
            w.writeStartDocument("filter");
            w.writeString("ssn", SSN);
            w.writeEndDocument();
            w.writeString(name, second);
            if (name.equals("find")) {
                w.writeString("$db", "hr");
            }
            w.writeEndDocument();
        }
        return new OpMsg(0, new RawBsonDocument(out.toByteArray()));
    }

    @Test
    void anUnknownCommandIsRefusedWhereItsTargetCannotBeShownPlain() {
        refused("{fimd: 'people', filter: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720011);
        refused("{fimd: 'other', filter: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720011); // hr has encrypted collections
        refused("{fimd: 1, $db: 'admin'}", 9720011);
        assertSame(RequestDecision.PASS, decide(command("{fimd: 'people', $db: 'plaindb'}")));
        assertSame(RequestDecision.PASS, decide(command("{serverStatus: 1, $db: 'admin'}")));
    }

    @Test
    void letVariablesBoundToTheEncryptedDocumentCarryItsPolicyFields() {
        for (String root : new String[] {"$$ROOT", "$$CURRENT"}) {
            refused("{aggregate: 'people', pipeline: [{$lookup: {from: 'plain', let: {r: '" + root + "'}, "
                    + "pipeline: [{$match: {$expr: {$eq: ['$$r.ssn', '" + SSN + "']}}}], as: 'j'}}], cursor: {}, "
                    + "$db: 'hr'}", 9720010);
        }
        refused("{aggregate: 'people', pipeline: [{$lookup: {from: 'plain', let: {r: '$$ROOT'}, "
                + "pipeline: [{$match: {$expr: {$eq: ['$$r', {ssn: '" + SSN + "'}]}}}], as: 'j'}}], cursor: {}, "
                + "$db: 'hr'}", 9720010);
        refused("{aggregate: 'people', pipeline: [{$lookup: {from: 'plain', let: {r: '$$ROOT'}, "
                + "pipeline: [{$match: {$expr: {$eq: ['$$r.address.street', 'x']}}}], as: 'j'}}], cursor: {}, "
                + "$db: 'hr'}", 9720010);
        // its plain fields may be used
        RequestDecision d = decide(command("{aggregate: 'people', pipeline: [{$lookup: {from: 'plain', let: "
                + "{r: '$$ROOT'}, pipeline: [{$match: {$expr: {$eq: ['$$r.name', '$name']}}}], as: 'j'}}], cursor: {}, "
                + "$db: 'hr'}"));
        assertFalse(d instanceof RequestDecision.Refuse, "a plain field of the bound document");
    }

    @Test
    void anUnknownUpdateOperatorGetsTheServersOwnAnswer() {
        BsonDocument reply = refused("{update: 'people', updates: [{q: {_id: 1}, u: {$thismodifierdoesntexist: "
                + "{name: 1}}}], $db: 'hr'}", 9);
        assertEquals("FailedToParse", reply.getString("codeName").getValue());
        assertTrue(errmsg(reply).contains("Unknown modifier: $thismodifierdoesntexist"), errmsg(reply));
        refused("{update: 'people', updates: [{q: {_id: 1}, u: {$thismodifierdoesntexist: 1}}], $db: 'hr'}", 9);
    }

    @Test
    void aFieldLiterallyNamedAsAPolicyPathIsRefused() {
        BsonDocument reply = refused("{insert: 'people', documents: [{'address.street': 'Main St 1'}], $db: 'hr'}",
                9720010);
        assertTrue(errmsg(reply).contains("'address.street'"), errmsg(reply));
        refused("{update: 'people', updates: [{q: {_id: 1}, u: {$set: {address: {'street.x': 1}}}}], $db: 'hr'}",
                9720010);
        // a dotted name that is no policy path is the application's business
        refusalFree("{insert: 'people', documents: [{'a.b': 1}], $db: 'hr'}");
    }

    private RequestDecision refusalFree(String json) {
        RequestDecision d = decide(command(json));
        assertFalse(d instanceof RequestDecision.Refuse, json);
        return d;
    }

    @Test
    void setFieldOfAFieldLiterallyNamedWithADollarIsNoEncryptedField() {
        refusalFree("{aggregate: 'people', pipeline: [{$set: {x: {$setField: {field: {$literal: '$a'}, input: "
                + "'$name', value: 1}}}}], cursor: {}, $db: 'hr'}");
    }

    @Test
    void aCommandWhoseElementNamesAnEncryptedCollectionIsAboutIt() {
        // found by fuzzing: renameCollection: 'all' (not 'hr.all') passed with a value in its writeConcern
        refused("{renameCollection: 'all', writeConcern: {'address.city': '" + SSN + "'}, $db: 'hr'}", 9720011);
        refused("{shardCollection: 'people', key: {_id: 1}, bogusArg: 1, $db: 'hr'}", 9720011);
        // found by fuzzing too: explain given a collection's name instead of a command
        refused("{explain: 'people', comment: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720011);
        refused("{dbStats: 'people', comment: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720010);
        // on the database that holds it, a comment naming a policy field is refused whatever the command
        refused("{dbStats: 1, comment: {ssn: '" + SSN + "'}, $db: 'hr'}", 9720010);
        assertSame(RequestDecision.PASS, decide(command("{dbStats: 1, comment: {x: '1'}, $db: 'hr'}")));
    }

    @Test
    void querySettingsOnAnEncryptedCollectionAreRefused() {
        refused("{setQuerySettings: {find: 'people', filter: {ssn: '" + SSN + "'}, $db: 'hr'}, settings: {}, "
                + "$db: 'admin'}", 9720011);
    }
}
