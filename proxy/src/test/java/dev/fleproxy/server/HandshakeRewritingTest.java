package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCompressor;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerMonitorListener;
import dev.fleproxy.testing.FakeUpstream;
import dev.fleproxy.testing.ProxyFixture;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A replica-set primary's hello (scripted, since the embedded backend is a standalone) seen by
 * the real Java driver through the proxy: the driver must see one standalone endpoint, in the
 * legacy OP_QUERY handshake and in every streamed (moreToCome) hello reply, and its request for
 * compression must never reach the server.
 */
class HandshakeRewritingTest {
    private static final List<String> MEMBERS = List.of("10.255.255.1:27017", "10.255.255.2:27017", "10.255.255.3:27017");
    private final ObjectId processId = new ObjectId();
    private final List<BsonDocument> hellosReceived = new CopyOnWriteArrayList<>();
    private FakeUpstream member;
    private ProxyServer proxy;

    private BsonDocument primaryHello(BsonDocument request) {
        BsonArray hosts = new BsonArray();
        MEMBERS.forEach(h -> hosts.add(new BsonString(h)));
        BsonDocument reply = new BsonDocument("topologyVersion",
                new BsonDocument("processId", new BsonObjectId(processId)).append("counter", new BsonInt64(0)))
                .append("hosts", hosts)
                .append("setName", new BsonString("rs0"))
                .append("setVersion", new BsonInt32(1))
                .append("isWritablePrimary", BsonBoolean.TRUE)
                .append("ismaster", BsonBoolean.TRUE)
                .append("secondary", BsonBoolean.FALSE)
                .append("primary", new BsonString(MEMBERS.get(0)))
                .append("me", new BsonString(MEMBERS.get(0)))
                .append("electionId", new BsonObjectId(new ObjectId()))
                .append("tags", new BsonDocument("dc", new BsonString("east")))
                .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024))
                .append("maxMessageSizeBytes", new BsonInt32(48_000_000))
                .append("maxWriteBatchSize", new BsonInt32(100_000))
                .append("localTime", new BsonDateTime(System.currentTimeMillis()))
                .append("maxWireVersion", new BsonInt32(21))
                .append("minWireVersion", new BsonInt32(0))
                .append("helloOk", BsonBoolean.TRUE)
                .append("ok", new BsonDouble(1));
        if (request.containsKey("compression")) {
            reply.append("compression", request.getArray("compression"));
        }
        return reply;
    }

    private void script(FakeUpstream.Conn conn, Frame request) throws IOException {
        if (request.opCode() == OpCode.OP_QUERY) {
            BsonDocument hello = OpQuery.parse(request).command();
            hellosReceived.add(hello);
            conn.send(new OpReply(0, 0, 0, List.of(primaryHello(hello))), request.requestId());
            return;
        }
        OpMsg msg = OpMsg.parse(request);
        String command = msg.body().getFirstKey();
        if (!dev.fleproxy.protocol.CommandTable.isHello(command)) {
            conn.send(new OpMsg(0, new BsonDocument("ok", new BsonDouble(1))), request.requestId());
            return;
        }
        hellosReceived.add(msg.body());
        if (msg.has(OpMsg.EXHAUST_ALLOWED) && msg.body().containsKey("topologyVersion")) {
            // Streaming hello: keep answering with moreToCome, as a 4.4+ server does.
            int previous = request.requestId();
            for (int i = 0; i < 50 && !conn.isClosed(); i++) {
                sleep(50);
                previous = conn.send(new OpMsg(OpMsg.MORE_TO_COME, primaryHello(msg.body())), previous);
            }
            conn.send(new OpMsg(0, primaryHello(msg.body())), previous);
            return;
        }
        conn.send(new OpMsg(0, primaryHello(msg.body())), request.requestId());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @BeforeEach
    void start() throws Exception {
        member = new FakeUpstream(this::script);
        proxy = ProxyFixture.startProxy(member.port());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        member.close();
    }

    private static boolean revealsTopology(BsonDocument hello) {
        for (String key : List.of("hosts", "setName", "primary", "me", "electionId", "setVersion", "tags")) {
            if (hello.containsKey(key)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void theDriverSeesOneStandaloneAndNoMemberAddresses() throws Exception {
        List<ServerHeartbeatSucceededEvent> heartbeats = new CopyOnWriteArrayList<>();
        ServerMonitorListener monitor = new ServerMonitorListener() {
            @Override
            public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
                heartbeats.add(event);
            }
        };
        // directConnection=false: the driver is free to discover members, if it learns of any.
        String uri = "mongodb://127.0.0.1:" + proxy.address().getPort() + "/?directConnection=false";
        try (MongoClient client = ProxyFixture.client(uri, b -> b
                .compressorList(List.of(MongoCompressor.createZlibCompressor()))
                .applyToServerSettings(s -> s.addServerMonitorListener(monitor)
                        .heartbeatFrequency(500, TimeUnit.MILLISECONDS)))) {
            assertEquals(1.0, client.getDatabase("admin").runCommand(new BsonDocument("ping", new BsonInt32(1)))
                    .get("ok", Number.class).doubleValue());

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (heartbeats.stream().filter(ServerHeartbeatSucceededEvent::isAwaited).count() < 3
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            List<ServerHeartbeatSucceededEvent> awaited = heartbeats.stream()
                    .filter(ServerHeartbeatSucceededEvent::isAwaited).toList();
            assertTrue(awaited.size() >= 3, "streamed hello replies arrived: " + heartbeats.size() + " heartbeats");
            for (ServerHeartbeatSucceededEvent e : heartbeats) {
                assertFalse(revealsTopology(e.getReply()), "heartbeat reply rewritten: " + e.getReply().toJson());
                assertFalse(e.getReply().containsKey("compression"));
            }

            ClusterDescription cluster = client.getClusterDescription();
            List<ServerDescription> servers = cluster.getServerDescriptions();
            assertEquals(1, servers.size(), cluster.getShortDescription());
            assertEquals(new ServerAddress("127.0.0.1", proxy.address().getPort()), servers.get(0).getAddress());
            assertEquals(ServerType.STANDALONE, servers.get(0).getType());
        }
        assertFalse(hellosReceived.isEmpty());
        for (BsonDocument hello : hellosReceived) {
            assertFalse(hello.containsKey("compression"), "compression stripped from " + hello.toJson());
        }
        // the rest passes untouched: the handshakes' client metadata, the streamed hellos' topologyVersion
        // (the driver's round-trip-time monitor also sends bare hellos, more of them on a busy machine)
        assertTrue(hellosReceived.stream().anyMatch(h -> h.containsKey("client")
                && h.getDocument("client").containsKey("driver")), "client metadata reached the server");
        assertTrue(hellosReceived.stream().anyMatch(h -> h.containsKey("topologyVersion")),
                "the streamed hellos' topologyVersion reached the server");
    }

    @Test
    void withoutTheProxyTheSameServerRevealsItsMembers() throws Exception {
        // Control: the scripted member really does reveal the topology, so the test above means something.
        try (MongoClient client = ProxyFixture.client("mongodb://127.0.0.1:" + member.port() + "/?directConnection=false",
                b -> b.applyToClusterSettings(c -> c.serverSelectionTimeout(200, TimeUnit.MILLISECONDS)))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (client.getClusterDescription().getServerDescriptions().size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(client.getClusterDescription().getServerDescriptions().stream()
                    .anyMatch(d -> d.getAddress().getHost().startsWith("10.255.255.")),
                    client.getClusterDescription().getShortDescription());
        }
    }
}
