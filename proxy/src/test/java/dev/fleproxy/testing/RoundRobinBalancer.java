package dev.fleproxy.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP load balancer for tests, as a Kubernetes Service or HAProxy in TCP mode is: each accepted
 * connection goes to the next target in turn (one that refuses is skipped), and its bytes are
 * copied both ways until either side closes. It knows nothing of MongoDB.
 */
public final class RoundRobinBalancer implements AutoCloseable {
    private final ServerSocket listener;
    private final List<InetSocketAddress> targets;
    private final AtomicInteger next = new AtomicInteger();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    /** Connections accepted, by the target they went to. */
    private final AtomicInteger[] accepted;

    public RoundRobinBalancer(List<InetSocketAddress> targets) throws IOException {
        this.targets = List.copyOf(targets);
        this.accepted = new AtomicInteger[targets.size()];
        for (int i = 0; i < accepted.length; i++) {
            accepted[i] = new AtomicInteger();
        }
        this.listener = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "balancer-accept");
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    public int accepted(int target) {
        return accepted[target].get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket upstream = connect();
                if (upstream == null) {
                    client.close();
                    continue;
                }
                open.add(client);
                open.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private Socket connect() {
        for (int tries = 0; tries < targets.size(); tries++) {
            int i = Math.floorMod(next.getAndIncrement(), targets.size());
            try {
                Socket s = new Socket();
                s.connect(targets.get(i), 2000);
                accepted[i].incrementAndGet();
                return s;
            } catch (IOException refused) {
                // the next one
            }
        }
        return null;
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    out.write(buf, 0, n);
                }
            } catch (IOException closed) {
                // either side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "balancer-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        open.forEach(RoundRobinBalancer::closeQuietly);
    }
}
