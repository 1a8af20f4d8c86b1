package dev.fleproxy.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

/** OP_QUERY, OP_REPLY, OP_COMPRESSED and opcodes the proxy does not know: round trips. */
class LegacyMessagesTest {
    private static final BsonDocument HELLO = new BsonDocument("isMaster", new BsonInt32(1))
            .append("helloOk", BsonBoolean.TRUE);

    @Test
    void opQueryRoundTripsWithAndWithoutFieldSelector() {
        OpQuery plain = new OpQuery(0, "admin.$cmd", 0, -1, HELLO, null);
        byte[] wire = Messages.bytes(plain, 9, 0);
        OpQuery parsed = (OpQuery) WireMessages.parse(Messages.frame(wire));
        assertEquals(plain.fullCollectionName(), parsed.fullCollectionName());
        assertEquals(HELLO, parsed.query());
        assertNull(parsed.returnFieldsSelector());
        assertTrue(parsed.isCommand());
        assertEquals("admin", parsed.database());
        assertArrayEquals(wire, Messages.bytes(parsed, 9, 0));

        OpQuery selected = new OpQuery(4, "db.coll", 5, 10, new BsonDocument("$query", HELLO),
                new BsonDocument("a", new BsonInt32(1)));
        byte[] wire2 = Messages.bytes(selected, 10, 0);
        OpQuery parsed2 = OpQuery.parse(Messages.frame(wire2));
        assertEquals(HELLO, parsed2.command(), "unwraps $query");
        assertEquals(selected.returnFieldsSelector(), parsed2.returnFieldsSelector());
        assertArrayEquals(wire2, Messages.bytes(parsed2, 10, 0));
    }

    @Test
    void opReplyRoundTrips() {
        OpReply reply = new OpReply(8, 123456789L, 0, List.of(HELLO, new BsonDocument("ok", new BsonInt32(1))));
        byte[] wire = Messages.bytes(reply, 1, 9);
        OpReply parsed = (OpReply) WireMessages.parse(Messages.frame(wire));
        assertEquals(reply.documents(), parsed.documents());
        assertEquals(123456789L, parsed.cursorId());
        assertArrayEquals(wire, Messages.bytes(parsed, 1, 9));
    }

    @Test
    void anOpQueryWhoseQueryLiesAboutAnInnerLengthIsAProtocolError() {
        // found by RequestRewriteFuzzTest#rawRequests: the driver's lazy document threw
        // IllegalArgumentException from containsKey, which the session logs as an unexpected error
        byte[] wire = Messages.bytes(new OpQuery(0, "h2.$cmd", 0, 0,
                new BsonDocument("a", new org.bson.BsonString("xyz")), null), 9, 0);
        int at = wire.length - 9; // the string's length, inside the query document
        ByteBuffer.wrap(wire).order(ByteOrder.LITTLE_ENDIAN).putInt(at, 1000);
        WireProtocolException e = assertThrows(WireProtocolException.class, () -> OpQuery.parse(Messages.frame(wire)));
        assertTrue(e.getMessage().contains("OP_QUERY query is not well-formed BSON"), e.getMessage());
    }

    @Test
    void opReplyWithAWrongDocumentCountIsRejected() {
        byte[] wire = Messages.bytes(new OpReply(0, 0, 0, List.of(HELLO)), 1, 9);
        ByteBuffer.wrap(wire).order(ByteOrder.LITTLE_ENDIAN).putInt(32, 2);
        assertThrows(WireProtocolException.class, () -> OpReply.parse(Messages.frame(wire)));
    }

    @Test
    void opCompressedRoundTripsWithoutDecompressing() {
        OpCompressed c = new OpCompressed(OpCode.OP_MSG, 100, 2, new byte[] {1, 2, 3, 4});
        byte[] wire = Messages.bytes(c, 5, 0);
        OpCompressed parsed = (OpCompressed) WireMessages.parse(Messages.frame(wire));
        assertEquals("zlib", parsed.compressorName());
        assertEquals(OpCode.OP_MSG, parsed.originalOpcode());
        assertArrayEquals(c.compressedMessage(), parsed.compressedMessage());
        assertArrayEquals(wire, Messages.bytes(parsed, 5, 0));
    }

    @Test
    void unknownOpcodesKeepTheirBytes() {
        byte[] wire = Messages.bytes(new OpaqueMessage(2002, new byte[] {9, 8, 7}), 3, 0);
        WireMessage parsed = WireMessages.parse(Messages.frame(wire));
        assertInstanceOf(OpaqueMessage.class, parsed);
        assertArrayEquals(new byte[] {9, 8, 7}, ((OpaqueMessage) parsed).body());
        assertEquals("OP_INSERT", OpCode.name(parsed.opCode()));
        assertArrayEquals(wire, Messages.bytes(parsed, 3, 0));
    }
}
