package dev.fleproxy.server;

import static dev.fleproxy.testing.Eventually.await;
import static dev.fleproxy.testing.RawClient.ping;
import static dev.fleproxy.testing.RawClient.reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.config.UpstreamTls;
import dev.fleproxy.testing.Cleanup;
import dev.fleproxy.testing.HeldTlsUpstream;
import dev.fleproxy.testing.LogCapture;
import dev.fleproxy.testing.RawClient;
import dev.fleproxy.testing.TestPki;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.channel.epoll.Epoll;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

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

    @RegisterExtension
    final LogCapture logged = new LogCapture();
    @RegisterExtension
    final Cleanup opened = new Cleanup();
    private HeldTlsUpstream upstream;
    private ProxyServer proxy;
    private Socket client;

    @BeforeAll
    static void certificates() throws Exception {
        pki = new TestPki(dir, "upstream");
        upstreamCert = pki.server("upstream", false, "127.0.0.1");
    }

    /** A proxy on this transport, one client connected, its upstream connection accepted and held. */
    private HeldTlsUpstream.Held connectedButNotReady(String transport) throws Exception {
        upstream = opened.add(new HeldTlsUpstream(pki.serverContext(upstreamCert)));
        proxy = opened.add(ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1",
                upstream.port()), 5000).withTransport(transport).withTls(null, new UpstreamTls(pki.caFile, null, null,
                null))));
        client = opened.add(RawClient.connect(proxy.address().getPort()));
        return upstream.next();
    }

    private void sendPings(int... ids) throws IOException {
        for (int id : ids) {
            client.getOutputStream().write(ping(id));
        }
    }

    @Test
    void aRequestEpollReadsBeforeTheUpstreamIsReadyIsNeitherForwardedNorAnErrorOfOurs() throws Exception {
        // epoll reads a peer's bytes when the peer half-closes (EPOLLRDHUP), whether or not the
        // proxy asked for a read: the fuzzer's clients sent a frame and closed, and under load the
        // frame came in before the upstream connect had completed.
        assumeTrue(Epoll.isAvailable(), "epoll does not load here: " + Epoll.unavailabilityCause());
        HeldTlsUpstream.Held up = connectedButNotReady("epoll");
        sendPings(1);
        client.shutdownOutput();

        assertEquals(-1, client.getInputStream().read(), "the client went away, so its connection is closed, unanswered");
        await(() -> proxy.activeSessions() == 0, "the session closed");
        // well before the 10 s handshake timeout would have ended it
        assertTrue(up.closedByProxy(5_000), "the proxy let go of the upstream connection it no longer needs");
        assertEquals(List.of(), logged.messagesAtLeast(Level.WARN),
                "a client that leaves is no error (it was: NullPointerException in Flow.write)");
    }

    @Test
    void pipelinedRequestsSentBeforeTheUpstreamIsReadyAreAnsweredInOrderOnceItIs() throws Exception {
        HeldTlsUpstream.Held up = connectedButNotReady("auto");
        sendPings(1, 2, 3);
        Thread.sleep(200); // give a premature read every chance to happen
        up.complete();
        for (int id = 1; id <= 3; id++) {
            assertEquals(id, reply(client).responseTo());
        }
        assertEquals(List.of(), logged.messagesAtLeast(Level.WARN));
    }

    @Test
    void whenTheUpstreamFailsBeforeItIsReadyTheFirstPipelinedRequestIsAnsweredWith9720001() throws Exception {
        HeldTlsUpstream.Held up = connectedButNotReady("auto");
        sendPings(1, 2, 3);
        up.refuse();
        Frame r = reply(client);
        assertEquals(1, r.responseTo());
        BsonDocument body = OpMsg.parse(r).body();
        assertEquals(9720001, body.getInt32("code").getValue(), body.toJson());
        assertTrue(body.getString("errmsg").getValue().startsWith("mongo-fle-proxy: TLS to upstream 127.0.0.1:"),
                body.toJson());
        assertEquals(-1, client.getInputStream().read(), "then the connection closes");
        await(() -> proxy.activeSessions() == 0, "the session closed");
        assertEquals(List.of(), logged.messagesAtLeast(Level.ERROR));
    }
}
