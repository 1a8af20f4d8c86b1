package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.testing.FakeUpstream;
import dev.fleproxy.testing.ProxyFixture;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * An exhaust stream of 256 one-megabyte replies to a client that stops reading: the proxy must
 * stop reading the upstream too (not buffer the stream), and then deliver every reply, in
 * order, byte for byte, as the client catches up.
 */
class ExhaustBackpressureTest {
    private static final int REPLIES = 256;
    private static final int PAYLOAD = 1024 * 1024;

    private static BsonDocument batch(int i) {
        byte[] payload = new byte[PAYLOAD];
        Arrays.fill(payload, (byte) i);
        return new BsonDocument("cursor", new BsonDocument("id", new BsonInt64(i == REPLIES - 1 ? 0 : 7))
                .append("ns", new BsonString("db.c"))
                .append("nextBatch", new org.bson.BsonArray(java.util.List.of(
                        new BsonDocument("_id", new BsonInt32(i)).append("p", new BsonBinary(payload))))))
                .append("ok", new BsonInt32(1));
    }

    private static void streamBatches(FakeUpstream.Conn conn, Frame request) throws IOException {
        int previous = request.requestId();
        for (int i = 0; i < REPLIES; i++) {
            int flags = i == REPLIES - 1 ? 0 : OpMsg.MORE_TO_COME;
            previous = conn.send(new OpMsg(flags, batch(i)), previous);
        }
    }

    @Test
    void aStalledClientStallsTheUpstreamAndThenGetsEveryReply() throws Exception {
        try (FakeUpstream upstream = new FakeUpstream(ExhaustBackpressureTest::streamBatches, 64 * 1024);
             ProxyServer proxy = ProxyFixture.startProxy(upstream.port());
             Socket client = new Socket()) {
            client.setReceiveBufferSize(64 * 1024);
            client.connect(new InetSocketAddress("127.0.0.1", proxy.address().getPort()));
            BsonDocument getMore = new BsonDocument("getMore", new BsonInt64(7))
                    .append("collection", new BsonString("c")).append("$db", new BsonString("db"));
            client.getOutputStream().write(WireIO.encode(new OpMsg(OpMsg.EXHAUST_ALLOWED, getMore), 77, 0));

            Thread.sleep(2000);
            long total = (long) REPLIES * PAYLOAD;
            long sentWhileStalled = upstream.bytesSent();
            System.out.println("sent while the client stalled: " + sentWhileStalled + " of " + total + " bytes");
            assertTrue(sentWhileStalled < total / 4,
                    "the upstream could send only what sockets and one message hold: " + sentWhileStalled + " of " + total);

            DataInputStream in = new DataInputStream(client.getInputStream());
            int expectedResponseTo = 77;
            for (int i = 0; i < REPLIES; i++) {
                byte[] reply = WireIO.readMessage(in);
                Frame frame = new Frame(Unpooled.wrappedBuffer(reply));
                assertEquals(expectedResponseTo, frame.responseTo(), "reply " + i + " continues the stream");
                assertEquals(i < REPLIES - 1, OpMsg.isMoreToCome(frame), "moreToCome on reply " + i);
                BsonDocument doc = OpMsg.parse(frame).body().getDocument("cursor").getArray("nextBatch")
                        .get(0).asDocument();
                assertEquals(i, doc.getInt32("_id").getValue(), "in order");
                byte[] expected = new byte[PAYLOAD];
                Arrays.fill(expected, (byte) i);
                assertArrayEquals(expected, doc.getBinary("p").getData());
                expectedResponseTo = frame.requestId();
            }
        }
    }
}
