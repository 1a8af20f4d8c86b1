package dev.fleproxy.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.testing.Bytes;
import dev.fleproxy.testing.InMemoryKeys;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.bson.BSONException;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

/**
 * The admission gate on single messages (policy: hr.people and hr.all): what it admits, and each
 * edge of issue 39's third round of attacks it closes (the integration test, test_fail_closed.py,
 * sends the same through the real proxy with a recording relay).
 */
class AdmissionGateTest {
    private static final Policy POLICY = InMemoryKeys.policy("gate");
    private final AdmissionGate gate = new AdmissionGate(() -> POLICY);

    private static Request request(byte[] frame) {
        return new Request(new Frame(Unpooled.wrappedBuffer(frame)), ByteBufAllocator.DEFAULT);
    }

    private static Request msg(String json, DocumentSequence... sequences) {
        return request(WireIO.encode(new OpMsg(0, BsonDocument.parse(json), List.of(sequences)), 3, 0));
    }

    /** A frame of any opcode around these bytes. */
    private static byte[] frame(int opCode, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(16 + body.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(16 + body.length).putInt(3).putInt(0).putInt(opCode).put(body);
        return b.array();
    }

    private String refused(Request r) {
        RequestDecision d = gate.onRequest(r);
        dev.fleproxy.wire.WireMessage m = assertInstanceOf(RequestDecision.Refuse.class, d, "refused").reply();
        BsonDocument reply = m instanceof OpReply legacy ? legacy.documents().get(0) : ((OpMsg) m).body();
        assertEquals(9720011, reply.getInt32("code").getValue(), reply.toJson());
        return reply.getString("errmsg").getValue();
    }

    private void admitted(Request r, String name, String db) {
        assertSame(RequestDecision.PASS, gate.onRequest(r));
        assertNotNull(r.command(), "admitted");
        assertEquals(name, r.command().name());
        assertEquals(db, r.command().database());
    }

    @Test
    void aCommandWithItsDatabaseIsAdmittedAndNamed() {
        admitted(msg("{find: 'people', filter: {ssn: '1'}, $db: 'hr'}"), "find", "hr");
        admitted(msg("{frobnicate: 1, $db: 'plain'}"), "frobnicate", "plain"); // unknown: decided by the next filter
    }

    @Test
    void withNothingEncryptedTheGateStepsAside() {
        AdmissionGate open = new AdmissionGate(() -> Policy.EMPTY);
        assertSame(RequestDecision.PASS, open.onRequest(request(frame(9999, new byte[] {1, 2, 3}))));
        assertSame(RequestDecision.PASS, open.onRequest(msg("{insert: 'people', documents: [], $db: 'HR'}")));
    }

    @Test
    void anOpcodeItDoesNotReadIsAnsweredAndTheConnectionClosed() {
        byte[] opCommand = concat(cstring("hr"), cstring("insert"), bson("{insert: 'people', documents: "
                + "[{_id: 129, ssn: '987-65-4321'}]}"), bson("{}"));
        for (byte[] f : List.of(frame(2010, opCommand), frame(9999, bson("{ssn: '987-65-4321'}")),
                WireIO.encode(new OpReply(0, 0L, 0, List.of(BsonDocument.parse("{ssn: 'x'}"))), 3, 0))) {
            RequestDecision d = gate.onRequest(request(f));
            RequestDecision.RefuseAndClose rc = assertInstanceOf(RequestDecision.RefuseAndClose.class, d);
            assertEquals(9720011, ((OpMsg) rc.reply()).body().getInt32("code").getValue());
        }
    }

    @Test
    void theLegacyWriteOpcodesCloseTheConnection() {
        for (int op : new int[] {2001, 2002, 2005, 2006, 2007}) {
            assertInstanceOf(RequestDecision.Close.class, gate.onRequest(request(frame(op, new byte[8]))));
        }
    }

    @Test
    void aCommandWithoutADatabaseIsRefused() {
        assertTrue(refused(msg("{delete: 'people', deletes: [{q: {ssn: '1'}, limit: 0}]}")).contains("names no database"));
        assertTrue(refused(msg("{find: 'people', $db: 5}")).contains("not a string"));
    }

    @Test
    void databaseNamesMongoDbCannotHoldOrSpelledInAnotherCaseAreRefused() {
        assertTrue(refused(msg("{insert: 'people', documents: [], $db: 'HR'}")).contains("differs only in case"));
        assertTrue(refused(msg("{insert: 'people', documents: [], $db: 'Hr'}")).contains("differs only in case"));
        assertTrue(refused(msg("{insert: 'people', documents: [], $db: 'hr.'}")).contains("'.'"));
        assertTrue(refused(msg("{insert: 'people', documents: [], $db: 'hr\\u0000'}")).contains("NUL"));
        assertTrue(refused(msg("{insert: 'people', documents: [], $db: ''}")).contains("empty"));
        admitted(msg("{insert: 'people', documents: [], $db: 'hr2'}"), "insert", "hr2");
    }

    @Test
    void collectionAndNamespaceSpellingsAreHeldToTheSameRules() {
        assertTrue(refused(msg("{insert: 'people\\u0000x', documents: [], $db: 'hr'}")).contains("NUL"));
        assertTrue(refused(msg("{find: '', $db: 'hr'}")).contains("empty"));
        assertTrue(refused(msg("{getMore: NumberLong(1), collection: 'pe$ople', $db: 'hr'}")).contains("'$'"));
        assertTrue(refused(msg("{shardCollection: 'HR.people', key: {_id: 1}, $db: 'admin'}"))
                .contains("differs only in case"));
        assertTrue(refused(msg("{bulkWrite: 1, ops: [], nsInfo: [{ns: 'HR.people'}], $db: 'admin'}"))
                .contains("differs only in case"));
    }

    @Test
    void aNameGivenTwiceAtTheTopIsRefusedWhereverItIs() {
        // bulkWrite: nsInfo in the body and as a sequence (the proxy read the body's, the server merges)
        DocumentSequence nsInfo = new DocumentSequence("nsInfo", List.of(BsonDocument.parse("{ns: 'hr.people'}")));
        DocumentSequence ops = new DocumentSequence("ops", List.of(BsonDocument.parse(
                "{insert: 0, document: {_id: 1, ssn: '987-65-4321'}}")));
        assertTrue(refused(msg("{bulkWrite: 1, nsInfo: [{ns: 'test.x'}], $db: 'admin'}", ops, nsInfo))
                .contains("'nsInfo' is given twice"));
        assertTrue(refused(msg("{bulkWrite: 1, $db: 'admin'}", ops, nsInfo, nsInfo)).contains("'nsInfo' is given twice"));
        DocumentSequence docs = new DocumentSequence("documents", List.of(BsonDocument.parse("{ssn: 'x'}")));
        assertTrue(refused(msg("{insert: 'people', documents: [], $db: 'hr'}", docs)).contains("given twice"));
    }

    @Test
    void malformedBsonAnywhereIsBadInput() {
        byte[] ok = WireIO.encode(new OpMsg(0, BsonDocument.parse("{insert: 'plain', $db: 'test'}"),
                List.of(new DocumentSequence("documents", List.of(BsonDocument.parse("{a: {b: 'cc'}}"))))), 3, 0);
        byte[] broken = ok.clone();
        int at = Bytes.indexOf(broken, "cc".getBytes()) - 4; // the string's length, which now lies
        broken[at] = 0x40;
        assertThrows(BSONException.class, () -> gate.onRequest(request(broken)));
        admitted(request(ok), "insert", "test");
    }

    @Test
    void overOpQueryOnlyTheHandshakePasses() {
        OpQuery hello = new OpQuery(0, "admin.$cmd", 0, -1, BsonDocument.parse("{isMaster: 1, helloOk: true, "
                + "client: {driver: {name: 'x', version: '1'}}, compression: ['zstd'], saslSupportedMechs: 'admin.u'}"),
                null);
        Request r = request(WireIO.encode(hello, 3, 0));
        assertSame(RequestDecision.PASS, gate.onRequest(r));
        assertTrue(r.command().legacyHandshake());
        OpQuery wrapped = new OpQuery(0, "admin.$cmd", 0, -1, BsonDocument.parse("{$query: {ismaster: 1}, "
                + "$readPreference: {mode: 'secondaryPreferred'}}"), null);
        assertSame(RequestDecision.PASS, gate.onRequest(request(WireIO.encode(wrapped, 3, 0))));

        String onHr = refused(request(WireIO.encode(new OpQuery(0, "hr.$cmd", 0, -1,
                BsonDocument.parse("{isMaster: 1}"), null), 3, 0)));
        assertTrue(onHr.contains("only for the handshake"), onHr);
        refused(request(WireIO.encode(new OpQuery(0, "admin.$cmd", 0, -1,
                BsonDocument.parse("{find: 'people', filter: {ssn: 'x'}}"), null), 3, 0)));
        String db = refused(request(WireIO.encode(new OpQuery(0, "admin.$cmd", 0, -1,
                BsonDocument.parse("{isMaster: 1, $db: 'hr'}"), null), 3, 0)));
        assertTrue(db.contains("'$db'"), db);
        refused(request(WireIO.encode(new OpQuery(0, "admin.$cmd", 0, -1,
                BsonDocument.parse("{isMaster: 1, ssn: {x: '987-65-4321'}}"), null), 3, 0)));
        // a driver's new flag, a single value, passes the gate (the encryption filter refuses one named like
        // a policy field)
        assertSame(RequestDecision.PASS, gate.onRequest(request(WireIO.encode(new OpQuery(0, "admin.$cmd", 0, -1,
                BsonDocument.parse("{isMaster: 1, backpressure: true, someNewFlag: 1}"), null), 3, 0))));
        refused(request(WireIO.encode(new OpQuery(0, "hr.people", 0, -1,
                BsonDocument.parse("{ssn: '987-65-4321'}"), null), 3, 0)));
    }

    // ---- bytes ---------------------------------------------------------------------------------

    private static byte[] bson(String json) {
        RawBsonDocument raw = RawBsonDocument.parse(json);
        byte[] b = new byte[raw.getByteBuffer().remaining()];
        raw.getByteBuffer().get(b);
        return b;
    }

    private static byte[] cstring(String s) {
        return (s + "\0").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
