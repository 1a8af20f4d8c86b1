package dev.fleproxy.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.testing.Bytes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

class OpMsgTest {
    private static final BsonDocument INSERT = new BsonDocument("insert", new BsonString("people"))
            .append("$db", new BsonString("hr"));
    private static final List<BsonDocument> DOCS = List.of(
            new BsonDocument("_id", new BsonInt32(1)).append("name", new BsonString("a")),
            new BsonDocument("_id", new BsonInt32(2)).append("name", new BsonString("b")));

    @Test
    void roundTripsBodyAndDocumentSequencesByteForByte() {
        OpMsg msg = new OpMsg(OpMsg.EXHAUST_ALLOWED, INSERT, List.of(new DocumentSequence("documents", DOCS)));
        byte[] wire = Messages.bytes(msg, 42, 0);
        OpMsg parsed = OpMsg.parse(Messages.frame(wire));
        assertEquals(OpMsg.EXHAUST_ALLOWED, parsed.flagBits());
        assertEquals(INSERT, parsed.body());
        assertEquals("documents", parsed.sequences().get(0).identifier());
        assertEquals(DOCS, parsed.sequences().get(0).documents());
        assertArrayEquals(wire, Messages.bytes(parsed, 42, 0), "re-encoding a parsed message changes nothing");
        assertEquals("insert", OpMsgView.of(Messages.frame(wire)).commandName());
    }

    @Test
    void aLyingLengthInsideTheBodyOrASequenceDocumentIsABsonErrorWhenDecoded() {
        // found by RequestRewriteFuzzTest#rawRequests: a pipeline array whose element lies about its
        // length made the driver's lazy RawBsonArray throw IllegalArgumentException
        BsonDocument agg = BsonDocument.parse("{aggregate: 'c', pipeline: [{$match: {a: 'xyz'}}], $db: 'd'}");
        byte[] wire = Messages.bytes(new OpMsg(0, agg), 1, 0);
        int at = Bytes.indexOf(wire, "xyz".getBytes(java.nio.charset.StandardCharsets.UTF_8)) - 4; // the string's length
        ByteBuffer.wrap(wire).order(ByteOrder.LITTLE_ENDIAN).putInt(at, 486_539_354);
        OpMsgView view = OpMsgView.of(Messages.frame(wire)); // the framing is intact
        assertEquals("aggregate", view.commandName());
        assertThrows(org.bson.BSONException.class, view::body);
        assertThrows(org.bson.BSONException.class, () -> OpMsgView.of(Messages.frame(wire)).toOpMsg());

        byte[] seq = Messages.bytes(new OpMsg(0, INSERT, List.of(new DocumentSequence("documents", DOCS))), 1, 0);
        int name = Bytes.indexOf(seq, new byte[] {2, 'n', 'a', 'm', 'e', 0}) + 6; // the first string's length
        ByteBuffer.wrap(seq).order(ByteOrder.LITTLE_ENDIAN).putInt(name, 1000);
        assertThrows(org.bson.BSONException.class, () -> OpMsgView.of(Messages.frame(seq)).sequences());
        assertThrows(org.bson.BSONException.class, () -> OpMsgView.of(Messages.frame(seq)).toOpMsg());
    }

    @Test
    void acceptsASequenceBeforeTheBody() {
        byte[] bodyFirst = Messages.bytes(new OpMsg(0, INSERT, List.of(new DocumentSequence("documents", DOCS))), 1, 0);
        // Move the kind-1 section in front of the kind-0 section: sections may come in any order.
        int bodyLen = BsonBytes.encode(INSERT).remaining();
        int seqStart = 16 + 4 + 1 + bodyLen;
        byte[] reordered = new byte[bodyFirst.length];
        System.arraycopy(bodyFirst, 0, reordered, 0, 20);
        System.arraycopy(bodyFirst, seqStart, reordered, 20, bodyFirst.length - seqStart);
        System.arraycopy(bodyFirst, 20, reordered, 20 + bodyFirst.length - seqStart, 1 + bodyLen);
        OpMsg parsed = OpMsg.parse(Messages.frame(reordered));
        assertEquals(INSERT, parsed.body());
        assertEquals(DOCS, parsed.sequences().get(0).documents());
        assertEquals("insert", OpMsgView.of(Messages.frame(reordered)).commandName());
    }

    @Test
    void writesAndVerifiesCrc32cChecksums() {
        OpMsg msg = new OpMsg(OpMsg.CHECKSUM_PRESENT, INSERT, List.of(new DocumentSequence("documents", DOCS)));
        byte[] wire = Messages.bytes(msg, 3, 0);
        assertEquals(msg.body(), OpMsg.parse(Messages.frame(wire)).body());

        for (int i = 20; i < wire.length; i++) {
            byte[] corrupt = wire.clone();
            corrupt[i] ^= 0x01;
            WireProtocolException e = assertThrows(WireProtocolException.class,
                    () -> OpMsgView.of(Messages.frame(corrupt)).commandName(), "flipped byte " + i);
            assertTrue(e.getMessage().contains("checksum"), e.getMessage());
        }
    }

    @Test
    void knowsMoreToComeFromTheFlags() {
        assertTrue(OpMsg.isMoreToCome(Messages.frame(Messages.bytes(new OpMsg(OpMsg.MORE_TO_COME, INSERT), 1, 0))));
        assertFalse(OpMsg.isMoreToCome(Messages.frame(Messages.bytes(new OpMsg(OpMsg.EXHAUST_ALLOWED, INSERT), 1, 0))));
    }

    private static byte[] withFlags(int flags) {
        byte[] wire = Messages.bytes(new OpMsg(0, INSERT), 1, 0);
        ByteBuffer.wrap(wire).order(ByteOrder.LITTLE_ENDIAN).putInt(16, flags);
        return wire;
    }

    private static String rejection(byte[] wire) {
        WireProtocolException a = assertThrows(WireProtocolException.class, () -> OpMsg.parse(Messages.frame(wire)));
        WireProtocolException b = assertThrows(WireProtocolException.class,
                () -> OpMsgView.of(Messages.frame(wire)).commandName());
        assertEquals(a.getMessage(), b.getMessage(), "peek and parse check the same structure");
        return a.getMessage();
    }

    @Test
    void rejectsUnknownRequiredFlagBitsButIgnoresOptionalOnes() {
        assertTrue(rejection(withFlags(1 << 3)).contains("unknown required flag bits 0x8"));
        assertEquals(INSERT, OpMsg.parse(Messages.frame(withFlags(1 << 20))).body());
    }

    @Test
    void rejectsBadSections() {
        byte[] wire = Messages.bytes(new OpMsg(0, INSERT, List.of(new DocumentSequence("documents", DOCS))), 1, 0);
        byte[] kind2 = wire.clone();
        kind2[20] = 2;
        assertTrue(rejection(kind2).contains("unknown section kind 2"));

        byte[] noBody = Messages.bytes(new OpMsg(0, INSERT), 1, 0);
        byte[] justHeader = java.util.Arrays.copyOf(noBody, 20);
        ByteBuffer.wrap(justHeader).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 20);
        assertTrue(rejection(justHeader).contains("no kind-0"));

        byte[] lyingDoc = wire.clone();
        ByteBuffer.wrap(lyingDoc).order(ByteOrder.LITTLE_ENDIAN).putInt(21, 10_000);
        assertTrue(rejection(lyingDoc).contains("OP_MSG body declares 10000 bytes"), rejection(lyingDoc));

        int seqAt = 21 + BsonBytes.encode(INSERT).remaining() + 1;
        byte[] lyingSeq = wire.clone();
        ByteBuffer.wrap(lyingSeq).order(ByteOrder.LITTLE_ENDIAN).putInt(seqAt, 1 << 20);
        assertTrue(rejection(lyingSeq).contains("document sequence declares"), rejection(lyingSeq));
    }

    @Test
    void rejectsTwoBodies() {
        byte[] one = Messages.bytes(new OpMsg(0, INSERT), 1, 0);
        int bodySection = one.length - 20;
        byte[] two = new byte[one.length + bodySection];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 20, two, one.length, bodySection);
        ByteBuffer.wrap(two).order(ByteOrder.LITTLE_ENDIAN).putInt(0, two.length);
        assertTrue(rejection(two).contains("more than one kind-0"));
    }
}
