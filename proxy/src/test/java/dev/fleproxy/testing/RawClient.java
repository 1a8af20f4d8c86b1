package dev.fleproxy.testing;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/** One end of a connection to the proxy over a blocking socket, for tests of what it does to a connection. */
public final class RawClient {
    /** How long a test waits for a reply or a close before it fails (generous: both cores may be busy). */
    public static final int READ_TIMEOUT_MS = 10_000;

    private RawClient() {
    }

    public static Socket connect(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port));
        s.setTcpNoDelay(true);
        s.setSoTimeout(READ_TIMEOUT_MS);
        return s;
    }

    /** An OP_MSG ping to admin. */
    public static byte[] ping(int requestId) {
        return WireIO.encode(new OpMsg(0, new BsonDocument("ping", new BsonInt32(1))
                .append("$db", new BsonString("admin"))), requestId, 0);
    }

    /** The next message from the peer. */
    public static Frame reply(Socket s) throws IOException {
        return new Frame(Unpooled.wrappedBuffer(WireIO.readMessage(new DataInputStream(s.getInputStream()))));
    }

    /** Whether the proxy closed this connection within the time (EOF or reset); what it sends meanwhile is skipped. */
    public static boolean closedByProxy(Socket s, long timeoutMs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        InputStream in = s.getInputStream();
        byte[] skip = new byte[4096];
        try {
            while (System.nanoTime() < deadline) {
                s.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (in.read(skip) < 0) {
                    return true;
                }
            }
            return false;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true; // reset
        } finally {
            if (!s.isClosed()) {
                s.setSoTimeout(READ_TIMEOUT_MS);
            }
        }
    }
}
