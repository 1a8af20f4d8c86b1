package dev.fleproxy.server;

import static dev.fleproxy.testing.Eventually.await;
import static dev.fleproxy.testing.RawClient.closedByProxy;
import static dev.fleproxy.testing.RawClient.ping;
import static dev.fleproxy.testing.RawClient.reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.Limits;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.rewrite.EncryptionFilter;
import dev.fleproxy.testing.Bytes;
import dev.fleproxy.testing.Cleanup;
import dev.fleproxy.testing.FakeUpstream;
import dev.fleproxy.testing.LogCapture;
import dev.fleproxy.testing.RawClient;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bounds on what peers that have proved nothing can make the proxy hold (issue 13): the real
 * proxy over TCP in front of a scripted upstream that answers every request with ok: 1. Read
 * timeout for incomplete messages (not for idle connections), the budget of buffered bytes, the
 * connection limit, and rate-limited lines about bad input.
 */
class BoundsTest {
    private static final long MB = 1_000_000;

    @RegisterExtension
    final LogCapture logged = new LogCapture();
    @RegisterExtension
    final Cleanup opened = new Cleanup();
    private FakeUpstream upstream;
    private ProxyServer proxy;

    private void start(Limits limits, List<MessageFilter> filters) throws Exception {
        upstream = opened.add(new FakeUpstream((conn, request) ->
                conn.send(new OpMsg(0, new BsonDocument("ok", new BsonInt32(1))), request.requestId())));
        proxy = opened.add(ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1",
                upstream.port()), 2000).withLimits(limits), filters));
    }

    private void start(Limits limits) throws Exception {
        start(limits, List.of(new HandshakeFilter()));
    }

    private Socket connect() throws IOException {
        return opened.add(RawClient.connect(proxy.address().getPort()));
    }

    /** A ping padded to exactly length bytes. */
    private static byte[] paddedPing(int requestId, int length) {
        int overhead = ping(requestId).length + 1 + 4 + 4 + 1; // the "pad" element: type, name, length, NUL
        char[] pad = new char[length - overhead];
        Arrays.fill(pad, 'x');
        byte[] m = WireIO.encode(new OpMsg(0, new BsonDocument("ping", new BsonInt32(1))
                .append("$db", new BsonString("admin")).append("pad", new BsonString(new String(pad)))), requestId, 0);
        assertEquals(length, m.length);
        return m;
    }

    /** Sends a ping and checks that its answer comes back. */
    private static void assertAnswered(Socket s, int requestId) throws IOException {
        s.getOutputStream().write(ping(requestId));
        assertEquals(requestId, reply(s).responseTo());
    }

    private List<ILoggingEvent> lines(String containing) {
        return logged.containing(containing);
    }

    private List<ILoggingEvent> warnings() {
        return logged.atLeast(Level.WARN);
    }

    // ---- clientReadTimeoutMs -----------------------------------------------------------------

    @Test
    void aSlowlorisIsClosedAfterTheReadTimeoutWhileAnIdlePooledConnectionStaysOpen() throws Exception {
        start(new Limits(1000, 0, 10_000, 512 * MB));
        Socket pooled = connect();
        assertAnswered(pooled, 1);
        long idleSince = System.nanoTime();

        // A header that declares 1,000 bytes, then one byte every 20 ms: every read is answered
        // well within the timeout, the message never completes.
        Socket slow = connect();
        OutputStream out = slow.getOutputStream();
        byte[] header = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(1000).putInt(7).putInt(0)
                .putInt(2013).array();
        long t0 = System.nanoTime();
        out.write(header);
        long lastSent = t0;
        long longestPauseMs = 0;
        boolean closed = false;
        try {
            while (!closed && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5)) {
                closed = closedByProxy(slow, 20);
                if (!closed) {
                    out.write('x');
                    long now = System.nanoTime();
                    longestPauseMs = Math.max(longestPauseMs, TimeUnit.NANOSECONDS.toMillis(now - lastSent));
                    lastSent = now;
                }
            }
        } catch (SocketException writeToClosed) {
            closed = true;
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(closed, "the slowloris was closed");
        assertTrue(tookMs >= 950 && tookMs < 5000, "closed after about clientReadTimeoutMs, not " + tookMs + " ms");
        // no pause as long as the timeout (570 ms were seen at a load average of 39): a timeout per read
        // would never have fired
        assertTrue(longestPauseMs < 1000, "it was closed although bytes kept coming; longest pause " + longestPauseMs);
        List<ILoggingEvent> warned = lines("message incomplete after 1000 ms");
        assertEquals(1, warned.size(), String.valueOf(warned));
        assertEquals(Level.WARN, warned.get(0).getLevel());
        assertTrue(warned.get(0).getFormattedMessage().matches(".*\\(got \\d+ of 1000 bytes; clientReadTimeoutMs\\)"),
                warned.get(0).getFormattedMessage());

        // Idle between messages for three times the timeout: a pooled connection, not a slow client.
        Thread.sleep(Math.max(0, 3000 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - idleSince)));
        assertAnswered(pooled, 2);
        assertEquals(warned, warnings(), "one line in all");
    }

    @Test
    void aMessageArrivingSlowlyButWithinTheTimeoutIsServed() throws Exception {
        start(new Limits(2000, 0, 10_000, 512 * MB));
        Socket s = connect();
        long t0 = System.nanoTime();
        sendInFourParts(s, ping(5)); // 1.2 s of a 2 s timeout: 800 ms to spare for a busy machine
        assertEquals(5, reply(s).responseTo());
        // and the clock starts afresh for each message: the second one ends past the first one's deadline
        sendInFourParts(s, ping(6));
        assertTrue(System.nanoTime() - t0 > TimeUnit.MILLISECONDS.toNanos(2000), "ended past the first deadline");
        assertEquals(6, reply(s).responseTo());
        assertEquals(List.of(), lines("closed"));
    }

    /** The message in four parts, 400 ms apart. */
    private static void sendInFourParts(Socket s, byte[] m) throws Exception {
        for (int i = 0; i < m.length; i += m.length / 4) {
            if (i > 0) {
                Thread.sleep(400);
            }
            s.getOutputStream().write(m, i, Math.min(m.length / 4, m.length - i));
        }
    }

    @Test
    void maxIdleTimeClosesAConnectionIdleBetweenMessagesWhenSet() throws Exception {
        start(new Limits(30_000, 1500, 10_000, 512 * MB));
        Socket s = connect();
        long t0 = System.nanoTime();
        long lastSent = t0;
        for (int i = 1; i <= 4; i++) { // activity restarts the clock: 4 pings 500 ms apart outlive one idle time
            Thread.sleep(i > 1 ? 500 : 0);
            lastSent = System.nanoTime(); // the idle clock restarts after this, when the reply is written
            assertAnswered(s, i);
        }
        assertTrue(System.nanoTime() - t0 > TimeUnit.MILLISECONDS.toNanos(1500), "kept past one idle time");
        assertTrue(closedByProxy(s, 6000), "closed when idle for maxIdleTimeMs");
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastSent);
        assertTrue(tookMs >= 1400 && tookMs < 4500, tookMs + " ms after the last ping was sent");
        assertEquals(1, lines("closed: idle for 1500 ms (maxIdleTimeMs)").size());
    }

    // ---- maxBufferedMessageBytes -------------------------------------------------------------

    @Test
    void overTheBudgetTheLargestIncompleteMessageIsClosedAndTheOthersGoOn() throws Exception {
        start(new Limits(30_000, 0, 10_000, 3 * MB));
        byte[] a = paddedPing(1, 2_000_000);
        byte[] b = paddedPing(2, 2_000_000);
        byte[] c = paddedPing(3, 2_000_000);
        Socket sa = connect();
        Socket sb = connect();
        Socket sc = connect();
        sa.getOutputStream().write(a, 0, 1_400_000);
        await(() -> proxy.bufferedMessageBytes() == 1_400_000, "A's bytes accounted");
        sb.getOutputStream().write(b, 0, 1_000_000);
        await(() -> proxy.bufferedMessageBytes() == 2_400_000, "B's bytes accounted");
        // C's read takes the total to 3.1 MB: the largest, A, is closed, not C that was reading
        sc.getOutputStream().write(c, 0, 700_000);

        assertTrue(closedByProxy(sa, 5000), "the largest was closed");
        await(() -> proxy.bufferedMessageBytes() == 1_700_000, "A's bytes left the budget");
        List<ILoggingEvent> warned = lines("maxBufferedMessageBytes");
        assertEquals(1, warned.size(), String.valueOf(warned));
        assertEquals(Level.WARN, warned.get(0).getLevel());
        assertTrue(warned.get(0).getFormattedMessage().contains("closed: it held 1400000 bytes of an incomplete message "
                + "(of 2000000), the largest when the incomplete messages of all clients passed "
                + "maxBufferedMessageBytes (3000000 bytes)"), warned.get(0).getFormattedMessage());

        // the others complete their messages and are answered
        sb.getOutputStream().write(b, 1_000_000, b.length - 1_000_000);
        assertEquals(2, reply(sb).responseTo());
        sc.getOutputStream().write(c, 700_000, c.length - 700_000);
        assertEquals(3, reply(sc).responseTo());
        assertEquals(0, proxy.bufferedMessageBytes());

        // a connection that goes away in the middle of a message gives its bytes back
        Socket sd = connect();
        sd.getOutputStream().write(a, 0, 500_000);
        await(() -> proxy.bufferedMessageBytes() == 500_000, "D's bytes accounted");
        sd.close();
        await(() -> proxy.bufferedMessageBytes() == 0, "the total back to 0");
        assertAnswered(sb, 4);
        assertAnswered(sc, 5);
        assertEquals(1, lines("maxBufferedMessageBytes").size());
    }

    @Test
    void aBudgetHeldByManyPeersAtOnceIsKeptAndAccountedBackToZero() throws Exception {
        // Ten peers push 1.5 MB each of a 2 MB message at the same time, against a 4 MB budget.
        start(new Limits(30_000, 0, 10_000, 4 * MB));
        byte[] m = paddedPing(1, 2_000_000);
        ExecutorService pool = Executors.newFixedThreadPool(10);
        try {
            List<Socket> peers = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                peers.add(connect());
            }
            List<Future<Boolean>> sent = new ArrayList<>();
            for (Socket p : peers) {
                sent.add(pool.submit(() -> {
                    try {
                        for (int off = 0; off < 1_500_000; off += 64 * 1024) {
                            p.getOutputStream().write(m, off, Math.min(64 * 1024, 1_500_000 - off));
                        }
                        return true;
                    } catch (IOException closedUnderUs) {
                        return false;
                    }
                }));
            }
            for (Future<Boolean> f : sent) {
                f.get(20, TimeUnit.SECONDS);
            }
            // Settled: every byte sent is read, and the survivors hold their 1.5 MB each.
            java.util.Set<Socket> closed = new java.util.HashSet<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (proxy.bufferedMessageBytes() != (peers.size() - closed.size()) * 1_500_000L) {
                assertTrue(System.nanoTime() < deadline, "settled: " + proxy.bufferedMessageBytes());
                for (Socket p : peers) {
                    if (!closed.contains(p) && closedByProxy(p, 20)) {
                        closed.add(p);
                    }
                }
            }
            // at most two 1.5 MB messages fit in 4 MB: at least eight peers are closed
            assertTrue(closed.size() >= 8, "closed: " + closed.size());
            System.out.println("10 peers x 1.5 MB against 4 MB: " + closed.size() + " closed, highest total "
                    + proxy.bounds().peakOverBudget());
            assertTrue(proxy.bufferedMessageBytes() <= 4 * MB, proxy.bufferedMessageBytes() + " bytes held");
            // Past the budget by what one read adds, plus what connections already condemned still
            // hold until their own event loop has closed them (their bytes count until freed, and a
            // condemned connection takes no more): one or two such messages on a quiet machine,
            // 9.5 MB seen once while a fuzzer ran beside the tests; bounded well below all ten.
            long peak = proxy.bounds().peakOverBudget();
            assertTrue(peak > 4 * MB && peak < 4 * MB + 5 * 1_500_000, "the highest total: " + peak);
            for (Socket p : peers) {
                p.close();
            }
            await(() -> proxy.bufferedMessageBytes() == 0, "the total back to 0");
            await(() -> proxy.clientConnections() == 0, "every connection gone");
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- maxConnections -----------------------------------------------------------------------

    @Test
    void beyondMaxConnectionsANewConnectionIsToldTheLimitAndClosedUntilASlotFrees() throws Exception {
        start(new Limits(30_000, 0, 3, 512 * MB));
        Socket c1 = connect();
        Socket c2 = connect();
        Socket c3 = connect();
        assertAnswered(c1, 1);
        assertAnswered(c2, 2);
        assertAnswered(c3, 3);
        // the fourth's first message is answered with the limit (a driver shows why), then it is closed
        Socket c4 = connect();
        c4.getOutputStream().write(ping(4));
        Frame answer = reply(c4);
        assertEquals(4, answer.responseTo());
        BsonDocument error = OpMsg.parse(answer).body();
        assertEquals(9720002, error.getInt32("code").getValue(), error.toJson());
        assertEquals("mongo-fle-proxy: too many connections to the proxy (limit 3)",
                error.getString("errmsg").getValue());
        assertTrue(closedByProxy(c4, 5000), "then the fourth is closed");
        // one that sends nothing is not held either: closed after OverLimitRefusal.DEADLINE_MS (2 s)
        Socket silent = connect();
        long t0 = System.nanoTime();
        assertTrue(closedByProxy(silent, 15_000), "a silent one is closed");
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) >= 1500, "after its deadline");
        assertEquals(3, upstream.connectionsAccepted(), "no upstream connection for the refused ones");
        assertEquals(3, proxy.clientConnections());
        List<ILoggingEvent> warned = lines("client connections are open (maxConnections)");
        assertEquals(1, warned.size(), "the second refusal is counted in the window: " + warned);
        assertTrue(warned.get(0).getFormattedMessage().matches("connection from /127\\.0\\.0\\.1:\\d+: refused: 3 "
                + "client connections are open \\(maxConnections\\); its first message is answered with the limit, "
                + "then it is closed"), warned.get(0).getFormattedMessage());

        c1.close();
        await(() -> proxy.clientConnections() == 2, "a slot freed");
        Socket c5 = connect();
        assertAnswered(c5, 5);
        assertAnswered(c2, 6);
        assertEquals(4, upstream.connectionsAccepted());
    }

    // ---- rate-limited lines about bad input --------------------------------------------------

    private static final Pattern SUMMARY = Pattern.compile("… and ([0-9,]+) more like it in the last 10 s$");

    @Test
    void tenThousandMalformedFramesWriteABoundedNumberOfLines() throws Exception {
        // An upstream that accepts and reads nothing back: each bad connection still makes the
        // proxy connect upstream first, and FakeUpstream's thread per connection would dominate.
        io.netty.channel.EventLoopGroup sinkLoop = new io.netty.channel.MultiThreadIoEventLoopGroup(1,
                io.netty.channel.nio.NioIoHandler.newFactory());
        try {
            io.netty.channel.Channel sink = new io.netty.bootstrap.ServerBootstrap().group(sinkLoop)
                    .channel(io.netty.channel.socket.nio.NioServerSocketChannel.class)
                    .childHandler(new io.netty.channel.ChannelInboundHandlerAdapter() {
                        @Override
                        public boolean isSharable() {
                            return true;
                        }
                    })
                    .bind("127.0.0.1", 0).sync().channel();
            proxy = opened.add(ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1",
                    ((InetSocketAddress) sink.localAddress()).getPort()), 2000), List.of(new HandshakeFilter())));
            sendTenThousandMalformedFrames();
        } finally {
            sinkLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private void sendTenThousandMalformedFrames() throws Exception {
        byte[] overSize = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(48_000_001).putInt(1).putInt(0)
                .putInt(2013).array();
        // a hello whose $db string declares more bytes than the document has: malformed BSON
        byte[] badHello = WireIO.encode(new OpMsg(0, new BsonDocument("hello", new BsonInt32(1))
                .append("$db", new BsonString("admin"))), 1, 0);
        int at = Bytes.indexOf(badHello, "$db\0".getBytes(StandardCharsets.US_ASCII)) + 4;
        badHello[at] = 100;
        int n = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        long t0 = System.nanoTime();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = thread; i < n; i += 4) {
                        try (Socket s = new Socket("127.0.0.1", proxy.address().getPort())) {
                            s.getOutputStream().write(i % 2 == 0 ? overSize : badHello);
                            s.setSoTimeout(10_000);
                            while (s.getInputStream().read() >= 0) {
                                // until the proxy closes it
                            }
                        } catch (IOException reset) {
                            // closed by the proxy
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        await(() -> proxy.clientConnections() == 0, "every bad connection closed");
        int during = warnings().size();
        // what the windows' summaries would say at their end, now
        proxy.bounds().log().flush(BadInputLog.Reason.PROTOCOL_ERROR);
        proxy.bounds().log().flush(BadInputLog.Reason.MALFORMED_BSON);

        List<ILoggingEvent> all = warnings();
        long windows = tookMs / 10_000 + 1;
        assertTrue(during <= 2 * (1 + windows), during + " lines for " + n + " bad frames in " + tookMs + " ms: " + all);
        long counted = 0;
        for (ILoggingEvent e : all) {
            assertEquals(Level.WARN, e.getLevel(), e.getFormattedMessage());
            assertNull(e.getThrowableProxy(), "no stack trace");
            Matcher m = SUMMARY.matcher(e.getFormattedMessage());
            counted += m.find() ? Long.parseLong(m.group(1).replace(",", "")) : 1;
        }
        assertEquals(n, counted, "every bad frame is in a line or a count: " + all);
        assertTrue(all.stream().anyMatch(e -> e.getFormattedMessage().contains("closed: protocol error from client: "
                + "declared message length 48000001 exceeds the maximum")));
        assertTrue(all.stream().anyMatch(e -> e.getFormattedMessage().contains("closed: malformed BSON from client")));
        System.out.println(n + " bad frames in " + tookMs + " ms: " + during + " log lines (" + all.size()
                + " with the summaries flushed): " + all.stream().map(ILoggingEvent::getFormattedMessage).toList());
    }

    // ---- exceptions from bad input that are not BSONExceptions -------------------------------

    private static final UUID KEY = UUID.fromString("11111111-2222-3333-4444-555555555555");

    @Test
    void aBodyThatLiesAboutALengthInsideIsBadInputNotAnError() throws Exception {
        KeyResolver resolver = new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                return new ResolvedKey(new DataKey(id, CipherAlgorithm.AES, new byte[32]), KeyState.ACTIVE, "1",
                        Instant.now());
            }

            @Override
            public String describe() {
                return "test keys";
            }
        }, KeyResolver.Settings.DEFAULT);
        try {
            resolver.prefetch(List.of(KEY));
            Policy policy = PolicyParser.parse(Map.of("hr.people", Map.of("key", KEY.toString(), "fields",
                    Map.of("ssn", Map.of()))), 6, "test");
            start(new Limits(30_000, 0, 10_000, 512 * MB),
                    List.of(new dev.fleproxy.admission.AdmissionGate(() -> policy), new HandshakeFilter(),
                            new EncryptionFilter(() -> policy, resolver, Duration.ofMillis(5000))));
            // create on an encrypted collection, its comment a string that declares 1.3 GB: the
            // message's own lengths hold. RawBsonDocument.containsKey("viewOn") used to throw
            // IllegalArgumentException("newPosition > limit") from ByteBuffer.position, logged as an
            // error with its trace; the body is now checked well-formed before it is decoded
            // (OpMsgView), so it is malformed BSON: one rate-limited line, no trace, no ERROR.
            byte[] m = WireIO.encode(new OpMsg(0, new BsonDocument("create", new BsonString("people"))
                    .append("$db", new BsonString("hr")).append("comment", new BsonString("abcdef"))), 9, 0);
            m[Bytes.indexOf(m, "comment\0".getBytes(StandardCharsets.US_ASCII)) + 8 + 3] = 0x50;
            for (int i = 0; i < 20; i++) {
                Socket s = connect();
                s.getOutputStream().write(m);
                assertTrue(closedByProxy(s, 5000));
            }
            Socket bystander = connect();
            assertAnswered(bystander, 1);

            List<ILoggingEvent> warned = lines("closed: malformed BSON from client");
            assertEquals(1, warned.size(), "rate-limited: " + warned);
            ILoggingEvent e = warned.get(0);
            assertEquals(Level.WARN, e.getLevel());
            assertNull(e.getThrowableProxy(), "no stack trace");
            assertEquals(List.of(), logged.all().stream().filter(x -> x.getLevel() == Level.ERROR).toList());
        } finally {
            resolver.close();
        }
    }

    @Test
    void aBugOfOursStaysAnErrorWithItsStackTraceAtMostOncePerWindow() throws Exception {
        MessageFilter buggy = request -> {
            throw new NullPointerException("a bug of ours");
        };
        start(new Limits(30_000, 0, 10_000, 512 * MB), List.of(buggy));
        for (int i = 0; i < 5; i++) {
            Socket s = connect();
            s.getOutputStream().write(ping(1));
            assertTrue(closedByProxy(s, 5000));
        }
        await(() -> proxy.clientConnections() == 0, "closed");
        proxy.bounds().log().flush(BadInputLog.Reason.UNEXPECTED_ERROR);
        List<ILoggingEvent> errors = logged.all().stream().filter(x -> x.getLevel() == Level.ERROR).toList();
        assertEquals(2, errors.size(), String.valueOf(errors));
        assertTrue(errors.get(0).getFormattedMessage().endsWith("closed after an unexpected error handling a message "
                + "from client"));
        assertEquals("java.lang.NullPointerException", errors.get(0).getThrowableProxy().getClassName());
        assertNull(errors.get(1).getThrowableProxy());
        assertTrue(errors.get(1).getFormattedMessage().endsWith("… and 4 more like it in the last 10 s"));
        assertFalse(BadInputLog.isMalformedInputSymptom(new io.netty.util.IllegalReferenceCountException(0)));
        assertTrue(BadInputLog.isMalformedInputSymptom(new NumberFormatException()));
    }
}
