package dev.fleproxy.testing;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.WireMessage;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A scripted stand-in for a server, for behaviours the embedded backend cannot show (a
 * replica-set member's hello, streaming hello, exhaust streams). Unit tests may fake a socket;
 * everything else talks to the real backend.
 */
public final class FakeUpstream implements AutoCloseable {

    /** Answers one request on one connection. */
    public interface Script {
        void handle(Conn conn, Frame request) throws IOException;
    }

    /** One accepted connection. */
    public static final class Conn {
        private final Socket socket;
        private final OutputStream out;
        private final AtomicLong bytesSent;
        private final AtomicInteger ids = new AtomicInteger(1000);

        Conn(Socket socket, AtomicLong bytesSent) throws IOException {
            this.socket = socket;
            this.out = socket.getOutputStream();
            this.bytesSent = bytesSent;
        }

        /** Sends a reply and returns its requestID. */
        public int send(WireMessage message, int responseTo) throws IOException {
            int id = ids.incrementAndGet();
            byte[] bytes = WireIO.encode(message, id, responseTo);
            out.write(bytes);
            out.flush();
            bytesSent.addAndGet(bytes.length);
            return id;
        }

        public boolean isClosed() {
            return socket.isClosed();
        }
    }

    private final ServerSocket server;
    private final Script script;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong bytesSent = new AtomicLong();
    private final AtomicInteger accepted = new AtomicInteger();
    private final int sendBufferSize;

    public FakeUpstream(Script script) throws IOException {
        this(script, 0);
    }

    /** sendBufferSize > 0 pins the socket's send buffer, so tests can bound what the kernel holds. */
    public FakeUpstream(Script script, int sendBufferSize) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.script = script;
        this.sendBufferSize = sendBufferSize;
        Thread acceptor = new Thread(this::acceptLoop, "fake-upstream-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public long bytesSent() {
        return bytesSent.get();
    }

    /** Connections accepted so far. */
    public int connectionsAccepted() {
        return accepted.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                accepted.incrementAndGet();
                if (sendBufferSize > 0) {
                    s.setSendBufferSize(sendBufferSize);
                }
                sockets.add(s);
                Thread t = new Thread(() -> serve(s), "fake-upstream-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            Conn conn = new Conn(s, bytesSent);
            DataInputStream in = new DataInputStream(s.getInputStream());
            while (true) {
                Frame frame = new Frame(Unpooled.wrappedBuffer(WireIO.readMessage(in)));
                script.handle(conn, frame);
            }
        } catch (EOFException e) {
            // client went away
        } catch (IOException e) {
            // closed while writing or reading; the test decides whether that matters
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
