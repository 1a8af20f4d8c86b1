package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.config.Limits;
import dev.fleproxy.config.PolicySection;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.server.HandshakeFilter;
import dev.fleproxy.server.ProxyServer;
import dev.fleproxy.testing.FakeUpstream;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Messages that wait for a key: the real proxy (session, filters, resolver) in front of a
 * scripted upstream, with a key source whose answers the test holds back. A message whose key is
 * not in memory must not block the event loop, must hold back the messages behind it on the
 * same connection (pipelined requests, an exhaust stream), and must be answered with 9720020
 * once kmsWaitMs has passed without the key.
 */
class WaitingForKeysTest {
    private static final UUID CACHED = UUID.fromString("11111111-2222-3333-4444-555555555555");
    private static final UUID SLOW = UUID.fromString("66666666-7777-8888-9999-aaaaaaaaaaaa");
    private static final int KEY_WAIT_MS = 1500;

    /** Keys by id; a key with a latch is delivered only once the test opens it. */
    private final Map<UUID, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final KeySource source = new KeySource() {
        @Override
        public ResolvedKey fetch(UUID id) {
            CountDownLatch gate = gates.get(id);
            if (gate != null) {
                try {
                    if (!gate.await(30, TimeUnit.SECONDS)) {
                        throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, "test KMS timed out");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, "interrupted");
                }
            }
            return new ResolvedKey(key(id), KeyState.ACTIVE, "1", Instant.now());
        }

        @Override
        public String describe() {
            return "test KMS";
        }
    };

    private final List<BsonDocument> upstreamSaw = new CopyOnWriteArrayList<>();
    private FakeUpstream upstream;
    private KeyResolver resolver;
    private ProxyServer proxy;
    private Limits limits = Limits.DEFAULT;
    /** kmsWaitMs: far longer than any test holds a key back, except where the wait's end is tested. */
    private int keyWaitMs = 20_000;

    private static DataKey key(UUID id) {
        byte[] material = new byte[32];
        Arrays.fill(material, (byte) id.getMostSignificantBits());
        return new DataKey(id, CipherAlgorithm.AES, material);
    }

    /**
     * Policy: hr.fast under the cached key (some of its values still under the one held back,
     * its previous key), hr.slow under the one held back; every field encrypted.
     */
    private static final Policy POLICY = PolicyParser.parse(Map.of(
            "hr.fast", Map.of("key", CACHED.toString(), "previousKeys", List.of(SLOW.toString()), "fields", "*"),
            "hr.slow", Map.of("key", SLOW.toString(), "fields", "*")), 0, "test");

    private void start(FakeUpstream.Script script) throws Exception {
        upstream = new FakeUpstream(script);
        resolver = new KeyResolver(source, new KeyResolver.Settings(Duration.ofMinutes(5), Duration.ofMinutes(5),
                Duration.ofSeconds(1), Duration.ofSeconds(1), 2));
        resolver.prefetch(List.of(CACHED));
        KmipConfig kmip = new KmipConfig(new KmipConfig.Server("127.0.0.1", 1, null),
                KmipConfig.Identity.pkcs12(Path.of("ca.pem"), Path.of("p.p12"), ""), new KmipConfig.Cache(Duration.ofMinutes(5),
                Duration.ofMinutes(5), Duration.ofSeconds(1), Duration.ofMillis(keyWaitMs)), new KmipConfig.Pool(2, 1000, 1000));
        ProxyConfig config = new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1", upstream.port()),
                2000, "auto", kmip, PolicySection.NONE).withLimits(limits);
        proxy = ProxyServer.start(config, List.of(new dev.fleproxy.admission.AdmissionGate(() -> POLICY),
                new HandshakeFilter(() -> true),
                new EncryptionFilter(() -> POLICY, resolver, Duration.ofMillis(keyWaitMs))));
    }

    @BeforeEach
    void holdBackTheSlowKey() {
        gates.put(SLOW, new CountDownLatch(1));
    }

    @AfterEach
    void stop() throws IOException {
        gates.values().forEach(CountDownLatch::countDown);
        if (proxy != null) {
            proxy.close();
        }
        if (resolver != null) {
            resolver.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    /** Answers every request with ok: 1 and records what it saw, in order. */
    private void acknowledge(FakeUpstream.Conn conn, Frame request) throws IOException {
        upstreamSaw.add(OpMsg.parse(request).body());
        conn.send(new OpMsg(0, new BsonDocument("ok", new BsonInt32(1))), request.requestId());
    }

    private static byte[] insert(String coll, int id, int requestId) {
        BsonDocument body = new BsonDocument("insert", new BsonString(coll)).append("$db", new BsonString("hr"))
                .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(id))
                        .append("name", new BsonString("n" + id)))));
        return WireIO.encode(new OpMsg(0, body), requestId, 0);
    }

    private static Frame read(DataInputStream in) throws IOException {
        return new Frame(Unpooled.wrappedBuffer(WireIO.readMessage(in)));
    }

    private List<String> collectionsSeen() {
        return upstreamSaw.stream().map(b -> b.getString(b.getFirstKey()).getValue()).toList();
    }

    @Test
    void pipelinedRequestsBehindOneThatWaitsForItsKeyKeepTheirOrder() throws Exception {
        start(this::acknowledge);
        try (Socket client = connect()) {
            ByteArrayOutputStream pipelined = new ByteArrayOutputStream();
            pipelined.write(insert("plain", 1, 101));
            pipelined.write(insert("slow", 2, 102)); // its key is not in memory
            pipelined.write(insert("fast", 3, 103));
            pipelined.write(insert("plain", 4, 104));
            client.getOutputStream().write(pipelined.toByteArray());

            DataInputStream in = new DataInputStream(client.getInputStream());
            assertEquals(101, read(in).responseTo());
            Thread.sleep(300);
            assertEquals(List.of("plain"), collectionsSeen(), "nothing behind the waiting request overtakes it");

            // another connection meanwhile: the event loop is free
            try (Socket other = connect()) {
                other.getOutputStream().write(insert("fast", 9, 901));
                assertEquals(901, read(new DataInputStream(other.getInputStream())).responseTo());
            }

            gates.get(SLOW).countDown();
            for (int expected : new int[] {102, 103, 104}) {
                assertEquals(expected, read(in).responseTo(), "replies in request order");
            }
            assertEquals(List.of("plain", "fast", "slow", "fast", "plain"), collectionsSeen());
            BsonDocument slow = upstreamSaw.get(2).getArray("documents").get(0).asDocument();
            assertTrue(slow.isBinary("name"), "the waiting insert went out encrypted: " + slow);
        }
    }

    @Test
    void aMessageBegunBehindOneWaitingForItsKeyIsNotTimedOutWhileTheProxyIsNotReading() throws Exception {
        // clientReadTimeoutMs measures the client's slowness only: while a request waits for its
        // key the proxy reads nothing from that connection, so the clock of the incomplete
        // message behind it stands still, however long the KMS takes (here 4 timeouts' worth).
        limits = new Limits(300, 0, 10_000, 512L * 1024 * 1024);
        start(this::acknowledge);
        try (Socket client = connect()) {
            byte[] next = insert("plain", 2, 302);
            ByteArrayOutputStream oneWrite = new ByteArrayOutputStream();
            oneWrite.write(insert("slow", 1, 301)); // its key is not in memory
            oneWrite.write(next, 0, 10);              // and 10 bytes of the next request
            client.getOutputStream().write(oneWrite.toByteArray());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (proxy.bufferedMessageBytes() != 10 && System.nanoTime() < deadline) {
                Thread.sleep(10); // the proxy reads the write (slower on a loaded machine)
            }
            assertEquals(10, proxy.bufferedMessageBytes(), "the proxy holds the incomplete message");
            Thread.sleep(1200);

            gates.get(SLOW).countDown();
            DataInputStream in = new DataInputStream(client.getInputStream());
            assertEquals(301, read(in).responseTo());
            client.getOutputStream().write(next, 10, next.length - 10);
            assertEquals(302, read(in).responseTo(), "the connection was not closed");
            assertEquals(List.of("slow", "plain"), collectionsSeen());
        }
    }

    @Test
    void aRequestWhoseKeyDoesNotComeInTimeGetsKeyUnavailable() throws Exception {
        keyWaitMs = KEY_WAIT_MS;
        start(this::acknowledge);
        try (Socket client = connect()) {
            long t0 = System.nanoTime();
            client.getOutputStream().write(insert("slow", 1, 201));
            client.getOutputStream().write(insert("plain", 2, 202));
            DataInputStream in = new DataInputStream(client.getInputStream());
            Frame refused = read(in);
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            BsonDocument err = OpMsg.parse(refused).body();
            assertEquals(201, refused.responseTo());
            assertEquals(9720020, err.getInt32("code").getValue(), err.toJson());
            assertTrue(err.getString("errmsg").getValue().contains("did not deliver it within " + KEY_WAIT_MS + " ms"),
                    err.toJson());
            assertTrue(waitedMs >= KEY_WAIT_MS - 100 && waitedMs < KEY_WAIT_MS + 2000, "answered after kmsWaitMs: "
                    + waitedMs + " ms");
            assertEquals(202, read(in).responseTo(), "the request behind it goes on");
            assertEquals(List.of("plain"), collectionsSeen(), "the refused insert never reached the upstream");
        }
    }

    @Test
    void anExhaustStreamKeepsItsOrderWhenOneReplyWaitsForItsKey() throws Exception {
        FieldCipher fast = FieldCipher.create(key(CACHED), CipherSuite.AES_GCM, false);
        FieldCipher slow = FieldCipher.create(key(SLOW), CipherSuite.AES_GCM, false);
        FieldCipher[] byReply = {fast, slow, fast, fast};
        start((conn, request) -> {
            upstreamSaw.add(OpMsg.parse(request).body());
            int previous = request.requestId();
            if (OpMsg.parse(request).body().containsKey("find")) { // opens the cursor the getMore continues
                conn.send(new OpMsg(0, new BsonDocument("cursor", new BsonDocument("id", new BsonInt64(7))
                        .append("ns", new BsonString("hr.fast")).append("firstBatch", new BsonArray()))
                        .append("ok", new BsonInt32(1))), previous);
                return;
            }
            for (int i = 0; i < byReply.length; i++) {
                BsonValueBytes v = BsonValueBytes.of(new BsonString("value " + i));
                BsonDocument doc = new BsonDocument("_id", new BsonInt32(i)).append("name",
                        new BsonBinary((byte) 0, byReply[i].encrypt(v.type(), v.bytes(),
                                dev.fleproxy.crypto.Envelope.context("hr.fast", "name"))));
                BsonDocument batch = new BsonDocument("cursor", new BsonDocument("id", new BsonInt64(i == byReply.length - 1 ? 0 : 7))
                        .append("ns", new BsonString("hr.fast"))
                        .append("nextBatch", new BsonArray(List.of(doc))))
                        .append("ok", new BsonInt32(1));
                previous = conn.send(new OpMsg(i == byReply.length - 1 ? 0 : OpMsg.MORE_TO_COME, batch), previous);
            }
        });
        try (Socket client = connect()) {
            client.getOutputStream().write(WireIO.encode(new OpMsg(0, new BsonDocument("find", new BsonString("fast"))
                    .append("$db", new BsonString("hr"))), 76, 0));
            assertEquals(76, read(new DataInputStream(client.getInputStream())).responseTo());
            BsonDocument getMore = new BsonDocument("getMore", new BsonInt64(7))
                    .append("collection", new BsonString("fast")).append("$db", new BsonString("hr"));
            client.getOutputStream().write(WireIO.encode(new OpMsg(OpMsg.EXHAUST_ALLOWED, getMore), 77, 0));
            DataInputStream in = new DataInputStream(client.getInputStream());
            Frame first = read(in);
            assertEquals("value 0", name(first));
            client.setSoTimeout(500);
            assertFalse(arrives(in), "the reply waiting for its key holds back the rest of the stream");
            client.setSoTimeout(10_000);
            gates.get(SLOW).countDown();
            int expectedResponseTo = first.requestId();
            for (int i = 1; i < byReply.length; i++) {
                Frame f = read(in);
                assertEquals(expectedResponseTo, f.responseTo(), "reply " + i + " continues the stream");
                assertEquals("value " + i, name(f), "reply " + i + " in order, decrypted");
                expectedResponseTo = f.requestId();
            }
        }
    }

    private static String name(Frame reply) {
        return OpMsg.parse(reply).body().getDocument("cursor").getArray("nextBatch").get(0).asDocument()
                .getString("name").getValue();
    }

    private static boolean arrives(DataInputStream in) throws IOException {
        try {
            in.mark(1);
            return in.read() >= 0;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", proxy.address().getPort()));
        s.setSoTimeout(10_000);
        return s;
    }
}
