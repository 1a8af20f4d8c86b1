package dev.fleproxy.server;

import static dev.fleproxy.testing.Eventually.await;
import static dev.fleproxy.testing.RawClient.closedByProxy;
import static dev.fleproxy.testing.RawClient.ping;
import static dev.fleproxy.testing.RawClient.reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.testing.Cleanup;
import dev.fleproxy.testing.FakeUpstream;
import dev.fleproxy.testing.LogCapture;
import dev.fleproxy.testing.RawClient;
import dev.fleproxy.wire.OpMsg;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The per-connection lines about the upstream (issue 26, item 11b): an upstream that closes every
 * connection, or cannot be reached, writes the first line in full and then one line per window
 * with a count, not one line per client connection.
 */
class UpstreamLogLinesTest {
    private static final int CONNECTIONS = 200;

    @RegisterExtension
    final LogCapture logged = new LogCapture();
    @RegisterExtension
    final Cleanup opened = new Cleanup();
    private ProxyServer proxy;
    private FakeUpstream upstream;

    private void start(int upstreamPort) throws Exception {
        proxy = opened.add(ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1",
                upstreamPort), 2000)));
    }

    /** The lines containing text, with the windows' summaries written now; checks they are few and count every connection. */
    private List<ILoggingEvent> aggregated(String text, BadInputLog.Reason reason, Level level, long tookMs)
            throws InterruptedException {
        await(() -> proxy.clientConnections() == 0, "every connection closed");
        int during = logged.containing(text).size();
        proxy.bounds().log().flush(reason);
        List<ILoggingEvent> lines = logged.containing(text);
        long windows = tookMs / 10_000 + 1;
        assertTrue(during <= 2 * windows, during + " lines for " + CONNECTIONS + " connections in " + tookMs + " ms");
        assertEquals(CONNECTIONS, LogCapture.occurrences(lines), "every connection is in a line or a count: " + lines);
        assertTrue(lines.stream().allMatch(e -> e.getLevel() == level), String.valueOf(lines));
        return lines;
    }

    @Test
    void anUpstreamThatClosesEveryConnectionWritesAFewCountedLines() throws Exception {
        upstream = opened.add(new FakeUpstream((conn, request) -> {
            throw new IOException("hang up"); // FakeUpstream closes the connection
        }));
        start(upstream.port());
        long t0 = System.nanoTime();
        for (int i = 0; i < CONNECTIONS; i++) {
            try (Socket s = RawClient.connect(proxy.address().getPort())) {
                s.getOutputStream().write(ping(i));
                assertTrue(closedByProxy(s, 10_000), "closed after the upstream's close");
            }
        }
        List<ILoggingEvent> lines = aggregated("closed the connection", BadInputLog.Reason.UPSTREAM_CLOSED, Level.INFO,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        assertTrue(lines.get(0).getFormattedMessage().matches("conn#\\d+ from /127\\.0\\.0\\.1:\\d+: upstream "
                + "127\\.0\\.0\\.1:" + upstream.port() + " closed the connection"), lines.get(0).getFormattedMessage());
    }

    @Test
    void anUnreachableUpstreamWritesAFewCountedLinesWhileEveryClientGetsItsError() throws Exception {
        int closedPort;
        try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = gone.getLocalPort();
        }
        start(closedPort);
        long t0 = System.nanoTime();
        for (int i = 0; i < CONNECTIONS; i++) {
            try (Socket s = RawClient.connect(proxy.address().getPort())) {
                s.getOutputStream().write(ping(i));
                assertEquals(9720001, OpMsg.parse(reply(s)).body().getInt32("code").getValue());
            }
        }
        List<ILoggingEvent> lines = aggregated("is unreachable", BadInputLog.Reason.UPSTREAM_UNAVAILABLE, Level.WARN,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        assertTrue(lines.get(0).getFormattedMessage().matches("conn#\\d+ from /127\\.0\\.0\\.1:\\d+: upstream "
                + "127\\.0\\.0\\.1:" + closedPort + " is unreachable: .+"), lines.get(0).getFormattedMessage());
    }
}
