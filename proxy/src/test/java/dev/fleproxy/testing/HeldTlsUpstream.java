package dev.fleproxy.testing;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * A TLS upstream whose handshakes the test holds: each connection is accepted over TCP and left
 * alone, so a proxy with {@code upstreamTls} is connected but its upstream is not ready (the
 * handshake waits) for exactly as long as the test wants. The test then completes the handshake
 * (the upstream answers every request with ok: 1) or closes the socket (the handshake fails).
 */
public final class HeldTlsUpstream implements AutoCloseable {
    private final ServerSocket server;
    private final SSLContext tls;
    private final BlockingQueue<Held> accepted = new LinkedBlockingQueue<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    /** One accepted connection, its TLS handshake not begun. */
    public final class Held {
        private final Socket raw;

        Held(Socket raw) {
            this.raw = raw;
        }

        /** Completes the handshake and serves the connection from now on, on a thread of its own. */
        public void complete() {
            Thread t = new Thread(this::serve, "held-tls-upstream-conn");
            t.setDaemon(true);
            t.start();
        }

        /** Closes the connection before the handshake: the proxy's upstream TLS fails. */
        public void refuse() throws IOException {
            raw.close();
        }

        /** Whether the proxy let go of this connection within the time (what it sent is skipped). */
        public boolean closedByProxy(long timeoutMs) throws IOException {
            return RawClient.closedByProxy(raw, timeoutMs);
        }

        private void serve() {
            try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(raw, null, raw.getPort(), true)) {
                s.setUseClientMode(false);
                s.startHandshake();
                DataInputStream in = new DataInputStream(s.getInputStream());
                int ids = 5000;
                while (true) {
                    Frame request = new Frame(Unpooled.wrappedBuffer(WireIO.readMessage(in)));
                    s.getOutputStream().write(WireIO.encode(new OpMsg(0, new BsonDocument("ok", new BsonInt32(1))),
                            ++ids, request.requestId()));
                    s.getOutputStream().flush();
                }
            } catch (IOException e) {
                // the proxy went away; the test decides whether that matters
            }
        }
    }

    public HeldTlsUpstream(SSLContext tls) throws IOException {
        this.tls = tls;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "held-tls-upstream-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The next connection the proxy made, waiting up to 10 s for it. */
    public Held next() throws InterruptedException {
        Held h = accepted.poll(10, TimeUnit.SECONDS);
        if (h == null) {
            throw new AssertionError("the proxy made no upstream connection within 10 s");
        }
        return h;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                sockets.add(s);
                accepted.add(new Held(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
