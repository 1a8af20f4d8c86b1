package dev.fleproxy.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Large messages in pieces of slabs: the bytes as written, the slabs freed when their pieces are back. */
class MessagePiecesTest {
    @Test
    void aMessageLargerThanASlabReadsBackAsWrittenAndItsSlabsGoWhenIdle() {
        MessagePieces.trimIfIdle();
        MessagePieces.trimIfIdle(); // whatever other tests left: gone
        int before = MessagePieces.slabs();
        byte[] message = new byte[MessagePieces.PIECES_PER_SLAB * MessagePieces.SIZE * 2 + 12_345]; // over two slabs
        new Random(7).nextBytes(message);
        ByteBuf out = MessagePieces.forMessage(ByteBufAllocator.DEFAULT, message.length);
        assertTrue(out instanceof CompositeByteBuf);
        for (int at = 0; at < message.length; at += 100_003) {
            out.writeBytes(message, at, Math.min(100_003, message.length - at)); // writes across pieces
        }
        out.setIntLE(0, 0x01020304); // and a value set back at the start, as a message's length is
        message[0] = 4;
        message[1] = 3;
        message[2] = 2;
        message[3] = 1;
        assertArrayEquals(message, ByteBufUtil.getBytes(out));
        assertEquals(before + 3, MessagePieces.slabs());
        out.release();
        // released: the slabs are spare now; past SPARE_SLABS they would go at once, and all go when idle
        assertTrue(MessagePieces.slabs() <= before + 3);
        MessagePieces.trimIfIdle(); // a piece was taken since the last trim: kept
        MessagePieces.trimIfIdle(); // none since: freed
        assertEquals(0, MessagePieces.slabs());
    }

    @Test
    void aSmallMessageIsOneBufferFromTheAllocator() {
        ByteBuf out = MessagePieces.forMessage(ByteBufAllocator.DEFAULT, 1000);
        assertTrue(!(out instanceof CompositeByteBuf) && out.capacity() >= 1000);
        out.release();
    }
}
