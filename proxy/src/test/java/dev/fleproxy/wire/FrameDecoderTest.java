package dev.fleproxy.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

class FrameDecoderTest {

    private static byte[] ping(int requestId) {
        return Messages.bytes(new OpMsg(0, new BsonDocument("ping", new BsonInt32(1)).append("$db",
                new org.bson.BsonString("admin"))), requestId, 0);
    }

    @Test
    void reassemblesMessagesFedOneByteAtATime() {
        byte[] a = ping(1);
        byte[] b = ping(2);
        byte[] stream = new byte[a.length + b.length];
        System.arraycopy(a, 0, stream, 0, a.length);
        System.arraycopy(b, 0, stream, a.length, b.length);

        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        int frames = 0;
        for (byte x : stream) {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {x}));
            Frame f = ch.readInbound();
            if (f != null) {
                frames++;
                byte[] expected = frames == 1 ? a : b;
                assertArrayEquals(expected, ByteBufUtil.getBytes(f.content()), "frame " + frames + " byte for byte");
                assertEquals(frames, f.requestId());
                f.release();
            }
        }
        assertEquals(2, frames);
        assertFalse(ch.finish());
    }

    /** A message of {@code size} bytes: a header that declares it, then a pattern. */
    private static byte[] sized(int size, int requestId) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(size).putInt(requestId).putInt(0).putInt(2013);
        for (int i = 16; i < size; i++) {
            b.put((byte) (i * 31 + requestId));
        }
        return b.array();
    }

    @Test
    void largeMessagesAreHeldAsTheReadsCameAndDecodeByteForByteAmongSmallOnes() {
        // two large messages back to back (the second begins in the read that ends the first, whose
        // frame is still held: the shared cumulation is copied, never written under it), then a small one
        byte[] big1 = sized(3_000_000, 1);
        byte[] big2 = sized(FrameDecoder.COMPOSITE_FROM + 17, 2);
        byte[] small = ping(3);
        byte[] stream = new byte[big1.length + big2.length + small.length];
        System.arraycopy(big1, 0, stream, 0, big1.length);
        System.arraycopy(big2, 0, stream, big1.length, big2.length);
        System.arraycopy(small, 0, stream, big1.length + big2.length, small.length);
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        java.util.List<Frame> frames = new java.util.ArrayList<>();
        for (int at = 0; at < stream.length; at += 65_531) {
            ch.writeInbound(Unpooled.wrappedBuffer(stream, at, Math.min(65_531, stream.length - at)));
            for (Frame f = ch.readInbound(); f != null; f = ch.readInbound()) {
                frames.add(f); // held until the end, as a frame in flight would be
            }
        }
        assertEquals(3, frames.size());
        assertArrayEquals(big1, ByteBufUtil.getBytes(frames.get(0).content()));
        assertArrayEquals(big2, ByteBufUtil.getBytes(frames.get(1).content()));
        assertArrayEquals(small, ByteBufUtil.getBytes(frames.get(2).content()));
        assertEquals(2, frames.get(1).requestId());
        assertInstanceOf(io.netty.buffer.CompositeByteBuf.class, frames.get(0).content().unwrap(), "held as the reads came");
        frames.forEach(Frame::release);
        assertFalse(ch.finish());
    }

    @Test
    void aLargeMessageTrickledInSmallReadsIsCopiedTogetherNotHeldReadByRead() {
        byte[] big = sized(FrameDecoder.COMPOSITE_FROM + 300_000, 7);
        FrameDecoder decoder = new FrameDecoder();
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        int at = 0;
        for (int piece = 0; at < big.length; piece++) {
            // mostly 10-byte reads, now and then a full 64 KB one (held as it came)
            int n = Math.min(piece % 500 == 499 ? 65_536 : 10, big.length - at);
            ch.writeInbound(Unpooled.wrappedBuffer(big, at, n));
            at += n;
            if (at < big.length && decoder.partialBytes() > FrameDecoder.COMPOSITE_FROM + 70_000) { // in pieces by now
                io.netty.buffer.ByteBuf held = decoder.internalBufferForTest();
                assertTrue(held.capacity() <= held.readableBytes() + MessagePieces.SIZE, "room " + held.capacity());
                assertTrue(((io.netty.buffer.CompositeByteBuf) held).numComponents() < 100,
                        "components " + ((io.netty.buffer.CompositeByteBuf) held).numComponents());
            }
        }
        Frame f = ch.readInbound();
        assertArrayEquals(big, ByteBufUtil.getBytes(f.content()));
        f.release();
        assertFalse(ch.finish());
    }

    @Test
    void aPeerThatDeclaresAHugeMessageAndSendsLittleMakesTheProxyHoldLittle() {
        FrameDecoder decoder = new FrameDecoder();
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        byte[] start = sized(45_000_000, 9);
        for (int at = 0; at < 4096; at += 10) {
            ch.writeInbound(Unpooled.wrappedBuffer(start, at, 10));
        }
        assertTrue(decoder.internalBufferForTest().capacity() <= 64 * 1024,
                "holds " + decoder.internalBufferForTest().capacity() + " bytes for 4,100 sent");
        assertFalse(decoder.internalBufferForTest() instanceof io.netty.buffer.CompositeByteBuf);
        assertThrows(WireProtocolException.class, ch::finishAndReleaseAll); // it left mid-message
    }

    @Test
    void saysHowMuchOfTheMessageBeingAssembledItHolds() {
        byte[] a = ping(1);
        FrameDecoder decoder = new FrameDecoder();
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        assertEquals(0, decoder.partialBytes());
        assertEquals(-1, decoder.partialDeclaredLength());

        ch.writeInbound(Unpooled.wrappedBuffer(a, 0, 3));
        assertEquals(3, decoder.partialBytes());
        assertEquals(-1, decoder.partialDeclaredLength(), "the length is not in yet");
        ch.writeInbound(Unpooled.wrappedBuffer(a, 3, 10));
        assertEquals(13, decoder.partialBytes());
        assertEquals(a.length, decoder.partialDeclaredLength());
        assertEquals(0, decoder.framesDecoded());

        // the rest of it and 5 bytes of the next one, in one read
        byte[] rest = new byte[a.length - 13 + 5];
        System.arraycopy(a, 13, rest, 0, a.length - 13);
        System.arraycopy(a, 0, rest, a.length - 13, 5);
        ch.writeInbound(Unpooled.wrappedBuffer(rest));
        assertEquals(1, decoder.framesDecoded());
        assertEquals(5, decoder.partialBytes(), "only the next message's bytes are held");
        ((Frame) ch.readInbound()).release();

        ch.writeInbound(Unpooled.wrappedBuffer(a, 5, a.length - 5));
        assertEquals(2, decoder.framesDecoded());
        assertEquals(0, decoder.partialBytes());
        ((Frame) ch.readInbound()).release();
        assertFalse(ch.finish());
    }

    @Test
    void splitsSeveralMessagesArrivingInOneRead() {
        byte[] a = ping(7);
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.writeInbound(Unpooled.wrappedBuffer(a, a, a));
        for (int i = 0; i < 3; i++) {
            Frame f = ch.readInbound();
            assertEquals(a.length, f.length());
            f.release();
        }
        assertNull(ch.readInbound());
    }

    private static byte[] lengthOnly(int declared) {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(declared).putInt(1).putInt(0)
                .putInt(OpCode.OP_MSG).array();
    }

    private static String rejection(byte[] input) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        DecoderException e = assertThrows(DecoderException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(input)));
        assertInstanceOf(WireProtocolException.class, e.getCause());
        return e.getCause().getMessage();
    }

    @Test
    void rejectsLengthsBelowTheHeader() {
        assertTrue(rejection(lengthOnly(5)).contains("smaller than the 16-byte header"));
        assertTrue(rejection(lengthOnly(-1)).contains("smaller than the 16-byte header"));
    }

    @Test
    void rejectsOversizeMessagesBeforeReadingThem() {
        String why = rejection(lengthOnly(MsgHeader.MAX_MESSAGE_SIZE + 1));
        assertTrue(why.contains("exceeds the maximum of 48000000"), why);
    }

    @Test
    void acceptsExactlyTheMaximumDeclaredLength() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.writeInbound(Unpooled.wrappedBuffer(lengthOnly(MsgHeader.MAX_MESSAGE_SIZE)));
        assertNull(ch.readInbound(), "waits for the rest of a legal 48 MB message");
    }

    @Test
    void rejectsGarbageSuchAsAnHttpRequest() {
        String why = rejection("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertTrue(why.contains("exceeds the maximum"), why);
    }

    @Test
    void reportsAStreamThatEndsMidMessage() {
        byte[] a = ping(1);
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.writeInbound(Unpooled.wrappedBuffer(a, 0, a.length - 3));
        WireProtocolException e = assertThrows(WireProtocolException.class, ch::finish);
        assertTrue(e.getMessage().contains("closed in the middle of a message (got "
                + (a.length - 3) + " of " + a.length + " bytes)"), e.getMessage());
    }
}
