package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.config.UpstreamTls;
import dev.fleproxy.testing.HeldTlsUpstream;
import dev.fleproxy.testing.TestPki;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.Unpooled;
import io.netty.channel.epoll.Epoll;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Client requests that arrive while the session's upstream connection is not ready yet (issue
 * 26, item 11a: a fuzz run's NullPointerException in Flow.write, the request written to an
 * upstream channel that did not exist yet). The upstream speaks TLS and the test holds its
 * handshake, so "connected but not ready" lasts exactly as long as the test wants: the same state
 * a plain TCP connect is in until it completes, stretched from microseconds to seconds.
 */
class UpstreamNotReadyTest {
    @TempDir
    static Path dir;
    private static TestPki pki;
    private static TestPki.Issued upstreamCert;

    private HeldTlsUpstream upstream;
    private ProxyServer proxy;
    private final List<Socket> sockets = new ArrayList<>();
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

    @BeforeAll
    static void certificates() throws Exception {
        pki = new TestPki(dir, "upstream");
        upstreamCert = pki.server("upstream", false, "127.0.0.1");
    }

    @BeforeEach
    void captureTheLog() {
        logged.start();
        root.addAppender(logged);
    }

    @AfterEach
    void stop() throws IOException {
        root.detachAppender(logged);
        for (Socket s : sockets) {
            s.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    private void start(String transport) throws Exception {
        upstream = new HeldTlsUpstream(pki.serverContext(upstreamCert));
        proxy = ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1",
                upstream.port()), 5000).withTransport(transport).withTls(null, new UpstreamTls(pki.caFile, null, null,
                null)));
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.connect(new InetSocketAddress("127.0.0.1", proxy.address().getPort()));
        s.setTcpNoDelay(true);
        s.setSoTimeout(10_000);
        return s;
    }

    private static byte[] ping(int requestId) {
        return WireIO.encode(new OpMsg(0, new BsonDocument("ping", new BsonInt32(1))
                .append("$db", new BsonString("admin"))), requestId, 0);
    }

    private static Frame reply(Socket s) throws IOException {
        return new Frame(Unpooled.wrappedBuffer(WireIO.readMessage(new DataInputStream(s.getInputStream()))));
    }

    private List<ILoggingEvent> atLeast(Level level) {
        synchronized (logged) {
            return new ArrayList<>(logged.list).stream().filter(e -> e.getLevel().isGreaterOrEqual(level)).toList();
        }
    }

    private void awaitNoSessions() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (proxy.activeSessions() != 0) {
            assertTrue(System.nanoTime() < deadline, "sessions still open: " + proxy.activeSessions());
            Thread.sleep(5);
        }
    }

    @Test
    void aRequestEpollReadsBeforeTheUpstreamIsReadyIsNeitherForwardedNorAnErrorOfOurs() throws Exception {
        // epoll reads a peer's bytes when the peer half-closes (EPOLLRDHUP), whether or not the
        // proxy asked for a read: the fuzzer's clients sent a frame and closed, and under load the
        // frame came in before the upstream connect had completed.
        assumeTrue(Epoll.isAvailable(), "epoll does not load here: " + Epoll.unavailabilityCause());
        start("epoll");
        Socket c = connect();
        HeldTlsUpstream.Held up = upstream.next(); // connected, handshake held: not ready
        c.getOutputStream().write(ping(1));
        c.shutdownOutput();

        assertEquals(-1, c.getInputStream().read(), "the client went away, so its connection is closed, unanswered");
        awaitNoSessions();
        // well before the 10 s handshake timeout would have ended it
        assertTrue(up.closedByPeer(5_000), "the proxy let go of the upstream connection it no longer needs");
        assertEquals(List.of(), atLeast(Level.WARN).stream().map(ILoggingEvent::getFormattedMessage).toList(),
                "a client that leaves is no error (it was: NullPointerException in Flow.write)");
    }

    @Test
    void pipelinedRequestsSentBeforeTheUpstreamIsReadyAreAnsweredInOrderOnceItIs() throws Exception {
        start("auto");
        Socket c = connect();
        HeldTlsUpstream.Held up = upstream.next();
        for (int id = 1; id <= 3; id++) {
            c.getOutputStream().write(ping(id));
        }
        Thread.sleep(200); // give a premature read every chance to happen
        up.complete();
        for (int id = 1; id <= 3; id++) {
            assertEquals(id, reply(c).responseTo());
        }
        assertEquals(List.of(), atLeast(Level.WARN).stream().map(ILoggingEvent::getFormattedMessage).toList());
    }

    @Test
    void whenTheUpstreamFailsBeforeItIsReadyTheFirstPipelinedRequestIsAnsweredWith9720001() throws Exception {
        start("auto");
        Socket c = connect();
        HeldTlsUpstream.Held up = upstream.next();
        for (int id = 1; id <= 3; id++) {
            c.getOutputStream().write(ping(id));
        }
        up.refuse();
        Frame r = reply(c);
        assertEquals(1, r.responseTo());
        BsonDocument body = OpMsg.parse(r).body();
        assertEquals(9720001, body.getInt32("code").getValue(), body.toJson());
        assertTrue(body.getString("errmsg").getValue().startsWith("mongo-fle-proxy: TLS to upstream 127.0.0.1:"),
                body.toJson());
        assertEquals(-1, c.getInputStream().read(), "then the connection closes");
        awaitNoSessions();
        assertEquals(List.of(), atLeast(Level.ERROR));
    }
}
