package dev.fleproxy.server;

import static dev.fleproxy.testing.RawClient.ping;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** A connection over maxConnections answers its first message with the limit, and holds little for little time. */
class OverLimitRefusalTest {
    private static final String ERRMSG = "mongo-fle-proxy: too many connections to the proxy (limit 3)";

    private static EmbeddedChannel refused() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(false, false);
        ch.register();
        // Time frozen before the deadline is scheduled (at channelActive): on a busy machine a
        // millisecond of real time between the two made "DEADLINE_MS - 1 later" past the deadline.
        ch.freezeTime();
        OverLimitRefusal.install(ch, null, 3);
        ch.pipeline().fireChannelActive(); // as the accept of a connection does
        return ch;
    }

    private static Frame written(EmbeddedChannel ch) {
        ByteBuf out = ch.readOutbound();
        return out == null ? null : new Frame(out);
    }

    private static void assertTheLimit(BsonDocument error) {
        assertEquals(0.0, error.getNumber("ok").doubleValue());
        assertEquals(ERRMSG, error.getString("errmsg").getValue());
        assertEquals(9720002, error.getInt32("code").getValue());
        assertEquals("FleProxyTooManyConnections", error.getString("codeName").getValue());
    }

    @Test
    void anOpMsgHelloIsAnsweredWithTheLimitThenTheConnectionCloses() throws Exception {
        EmbeddedChannel ch = refused();
        byte[] hello = WireIO.encode(new OpMsg(0, new BsonDocument("hello", new BsonInt32(1))
                .append("$db", new BsonString("admin"))), 41, 0);
        ch.writeInbound(Unpooled.wrappedBuffer(hello, 0, 10)); // in two parts: the rest is read
        assertNull(written(ch));
        ch.writeInbound(Unpooled.wrappedBuffer(hello, 10, hello.length - 10), Unpooled.wrappedBuffer(ping(42)));
        Frame reply = written(ch);
        assertEquals(OpCode.OP_MSG, reply.opCode());
        assertEquals(41, reply.responseTo());
        assertTheLimit(OpMsg.parse(reply).body());
        reply.release();
        assertNull(written(ch), "a message behind the first is not answered");
        assertFalse(ch.isOpen());
    }

    @Test
    void aLegacyOpQueryHelloGetsItsErrorAsAnOpReply() throws Exception {
        EmbeddedChannel ch = refused();
        ch.writeInbound(Unpooled.wrappedBuffer(WireIO.encode(new OpQuery(0, "admin.$cmd", 0, -1,
                new BsonDocument("isMaster", new BsonInt32(1)), null), 7, 0)));
        Frame reply = written(ch);
        assertEquals(OpCode.OP_REPLY, reply.opCode());
        assertEquals(7, reply.responseTo());
        assertTheLimit(OpReply.parse(reply).documents().get(0));
        reply.release();
        assertFalse(ch.isOpen());
    }

    @Test
    void aMessageDeclaredOver16KiBIsClosedUnansweredAtItsLengthBytes() throws Exception {
        EmbeddedChannel ch = refused();
        ch.writeInbound(Unpooled.wrappedBuffer(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(16 * 1024 + 1).flip()));
        assertNull(written(ch));
        assertFalse(ch.isOpen());
    }

    @Test
    void anotherOpcodeIsClosedUnanswered() throws Exception {
        EmbeddedChannel ch = refused();
        byte[] m = ping(1);
        ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).putInt(12, OpCode.OP_COMPRESSED);
        ch.writeInbound(Unpooled.wrappedBuffer(m));
        assertNull(written(ch));
        assertFalse(ch.isOpen());
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTwoSeconds() throws Exception {
        EmbeddedChannel ch = refused();
        ch.advanceTimeBy(OverLimitRefusal.DEADLINE_MS - 1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isOpen());
        ch.writeInbound(Unpooled.wrappedBuffer(ping(1), 0, 20)); // a message begun does not extend it
        ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertFalse(ch.isOpen());
        assertNull(written(ch));
    }
}
