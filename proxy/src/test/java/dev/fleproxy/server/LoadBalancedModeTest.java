package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerType;
import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.testing.ProxyFixture;
import dev.fleproxy.testing.RawClient;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.testing.RoundRobinBalancer;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The Java driver in load-balanced mode ({@code loadBalanced=true}) through a TCP balancer in front
 * of two proxies: each answers the handshake as a mongos behind a balancer, with its own serviceId;
 * the server's cursors keep working, since a cursor's getMore goes on the connection that opened it
 * (the driver pins it) and that connection keeps its upstream connection.
 */
class LoadBalancedModeTest {

    @Test
    void theJavaDriverWorksThroughABalancerInFrontOfTwoProxies() throws Exception {
        try (EmbeddedBackend backend = EmbeddedBackend.start("127.0.0.1", 0, null);
             ProxyServer one = ProxyFixture.startProxy(backend.address().getPort());
             ProxyServer two = ProxyFixture.startProxy(backend.address().getPort());
             RoundRobinBalancer balancer = new RoundRobinBalancer(List.of(
                     (InetSocketAddress) one.address(), (InetSocketAddress) two.address()));
             MongoClient client = ProxyFixture.client("mongodb://127.0.0.1:" + balancer.port() + "/?loadBalanced=true",
                     b -> b.applyToConnectionPoolSettings(p -> p.maxSize(4)))) {
            MongoCollection<Document> items = client.getDatabase("lb").getCollection("items");
            List<Document> docs = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                docs.add(new Document("_id", i).append("v", "value " + i));
            }
            items.insertMany(docs);
            List<Thread> readers = new ArrayList<>();
            List<Integer> counts = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < 4; t++) { // several connections at once: both proxies get some
                Thread r = new Thread(() -> {
                    int n = 0;
                    try (MongoCursor<Document> c = items.find().batchSize(7).iterator()) {
                        while (c.hasNext()) {
                            c.next();
                            n++;
                        }
                    }
                    counts.add(n);
                });
                readers.add(r);
                r.start();
            }
            for (Thread r : readers) {
                r.join(30_000);
            }
            assertEquals(List.of(200, 200, 200, 200), counts, "every cursor read to its end through getMore");
            assertEquals(ClusterType.LOAD_BALANCED, client.getClusterDescription().getType());
            assertEquals(ServerType.LOAD_BALANCER, client.getClusterDescription().getServerDescriptions().get(0).getType());
            assertTrue(balancer.accepted(0) > 0 && balancer.accepted(1) > 0,
                    "connections went to both proxies: " + balancer.accepted(0) + ", " + balancer.accepted(1));
        }
    }

    @Test
    void eachProxyNamesItselfByItsOwnServiceId() throws Exception {
        try (EmbeddedBackend backend = EmbeddedBackend.start("127.0.0.1", 0, null);
             ProxyServer one = ProxyFixture.startProxy(backend.address().getPort());
             ProxyServer two = ProxyFixture.startProxy(backend.address().getPort())) {
            BsonDocument first = hello(one);
            BsonDocument second = hello(two);
            assertEquals("isdbgrid", first.getString("msg").getValue());
            assertTrue(first.getBoolean("isWritablePrimary").getValue());
            assertNotEquals(first.getObjectId("serviceId"), second.getObjectId("serviceId"));
            assertEquals(first.getObjectId("serviceId"), hello(one).getObjectId("serviceId"), "one per proxy, not per connection");
        }
    }

    /** A load-balanced hello on a connection of its own, as a driver sends it (OP_MSG). */
    private static BsonDocument hello(ProxyServer proxy) throws Exception {
        try (java.net.Socket s = RawClient.connect(((InetSocketAddress) proxy.address()).getPort())) {
            s.getOutputStream().write(WireIO.encode(new OpMsg(0,
                    BsonDocument.parse("{hello: 1, loadBalanced: true, $db: 'admin'}")), 1, 0));
            return OpMsg.parse(RawClient.reply(s)).body();
        }
    }
}
