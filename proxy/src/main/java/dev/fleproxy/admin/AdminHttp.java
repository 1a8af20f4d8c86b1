package dev.fleproxy.admin;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener's HTTP/1.1 (GET and HEAD, one request per connection), bounded so that slow
 * or greedy peers cannot keep the probes from being answered. The JDK's HTTP server read request
 * heads with blocking reads on its handler thread: one peer dribbling a request stalled every probe
 * for 10 s, and a few new ones a second kept /healthz failing for good.
 *
 * <ul>
 *   <li>Sockets are read without blocking, by one event loop of the listener's own (never the data
 *       path's): a slow peer holds no thread.
 *   <li>A request's line and headers must arrive within {@link #HEAD_TIMEOUT_MS} of the connection,
 *       however they trickle in, and take at most {@link #MAX_HEAD_BYTES}; a body is never read.
 *   <li>At most {@link #MAX_CONNECTIONS} connections at once. A new one over the limit takes the
 *       place of the oldest, whatever it is doing (sending its request, or not reading its answer),
 *       so peers that hold connections cannot lock out a probe: to push one out they would have to
 *       open that many connections in the few milliseconds it takes.
 *   <li>Answers are computed off the event loop: the paths given as {@code ownThread} on a thread of
 *       their own (/healthz: a /readyz waiting for the KMS does not delay it), the rest on another.
 * </ul>
 */
final class AdminHttp implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminHttp.class);
    static final long HEAD_TIMEOUT_MS = 5_000;
    /** How long a peer may take to read its answer (an unread answer holds its buffer until then). */
    static final long ANSWER_TIMEOUT_MS = 30_000;
    static final int MAX_CONNECTIONS = 16;
    static final int MAX_HEAD_BYTES = 8192;

    /** An answer: status, content type and body (a HEAD request gets the headers only). */
    record Response(int status, String type, String body) {
    }

    private final EventLoopGroup loop;
    private final Channel listener;
    private final ExecutorService ownLane;
    private final ExecutorService sharedLane;
    private final Set<String> ownThread;
    private final Function<String, Response> handler;
    /** Connections open (oldest first), and those still sending their request; touched on the loop only. */
    private final LinkedHashSet<Channel> open = new LinkedHashSet<>();
    private final Set<Channel> reading = new HashSet<>();

    private AdminHttp(InetSocketAddress address, Function<String, Response> handler, Set<String> ownThread)
            throws InterruptedException {
        this.handler = handler;
        this.ownThread = Set.copyOf(ownThread);
        this.ownLane = Executors.newSingleThreadExecutor(new DefaultThreadFactory("admin-health", true));
        this.sharedLane = Executors.newSingleThreadExecutor(new DefaultThreadFactory("admin-http", true));
        this.loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("admin-io", true),
                NioIoHandler.newFactory());
        try {
            listener = new ServerBootstrap().group(loop).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            admit(ch);
                        }
                    })
                    .bind(address).sync().channel();
        } catch (RuntimeException | InterruptedException e) {
            close();
            throw e;
        }
    }

    /**
     * Listens on {@code address}; {@code handler} answers a GET or HEAD of a path (any thread);
     * the paths in {@code ownThread} are answered on a thread of their own.
     */
    static AdminHttp start(InetSocketAddress address, Function<String, Response> handler, Set<String> ownThread)
            throws InterruptedException {
        return new AdminHttp(address, handler, ownThread);
    }

    InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** On the loop: counts the connection in, making room if it must, and starts its clock. */
    private void admit(SocketChannel ch) {
        if (open.size() >= MAX_CONNECTIONS) {
            Channel oldest = open.iterator().next();
            forget(oldest);
            oldest.close();
        }
        open.add(ch);
        reading.add(ch);
        ScheduledFuture<?> deadline = ch.eventLoop().schedule(() -> {
            if (reading.contains(ch)) {
                ch.close(); // no complete request in time: a slow peer, or one that sends nothing
            }
        }, HEAD_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        ch.closeFuture().addListener(f -> {
            deadline.cancel(false);
            forget(ch);
        });
        ch.pipeline().addLast(new Connection());
    }

    private void forget(Channel ch) {
        open.remove(ch);
        reading.remove(ch);
    }

    /** One connection: gathers the request head, then hands the request to its lane. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private final ByteBuf head = Unpooled.buffer(256, MAX_HEAD_BYTES);

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                if (!reading.contains(ctx.channel())) {
                    return; // answered or answering: whatever follows the head is not read
                }
                int end = endOfHead(in);
                if (end >= 0) {
                    handle(ctx.channel(), head.toString(0, end, StandardCharsets.ISO_8859_1).split("\r\n", 2)[0]);
                } else if (in.isReadable()) { // more than fits, and no end in what did
                    // answered and closed with the rest unread: the peer may see a reset before the answer
                    stopReading(ctx.channel());
                    answer(ctx.channel(), false, new Response(431, "text/plain", "request head over "
                            + MAX_HEAD_BYTES + " bytes\n"));
                }
            } finally {
                in.release();
            }
        }

        /**
         * Appends what fits of {@code in} and returns where the head ends, or -1. Searches only
         * what is new (and the three bytes before), so a head that trickles in is not rescanned.
         */
        private int endOfHead(ByteBuf in) {
            int from = Math.max(0, head.writerIndex() - 3);
            head.writeBytes(in, Math.min(in.readableBytes(), head.maxWritableBytes()));
            for (int i = from; i + 4 <= head.writerIndex(); i++) {
                if (head.getByte(i) == '\r' && head.getByte(i + 1) == '\n' && head.getByte(i + 2) == '\r'
                        && head.getByte(i + 3) == '\n') {
                    return i;
                }
            }
            return -1;
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            head.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a reset by the peer, mostly: nothing to tell anyone
        }
    }

    /** On the loop, with a complete request line: a bad one is answered at once, a good one on its lane. */
    private void handle(Channel ch, String requestLine) {
        stopReading(ch);
        String[] parts = requestLine.split(" ");
        String path = parts.length == 3 && parts[2].startsWith("HTTP/1.") ? path(parts[1]) : null;
        if (path == null) {
            answer(ch, false, new Response(400, "text/plain", "not an HTTP/1.x request\n"));
            return;
        }
        boolean headOnly = parts[0].equals("HEAD");
        if (!headOnly && !parts[0].equals("GET")) {
            answer(ch, false, new Response(405, "text/plain", "only GET and HEAD\n"));
            return;
        }
        ScheduledFuture<?> deadline = ch.eventLoop().schedule(() -> {
            ch.close(); // the peer does not take its answer
        }, ANSWER_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        ch.closeFuture().addListener(f -> deadline.cancel(false));
        try {
            (ownThread.contains(path) ? ownLane : sharedLane).execute(() -> {
                if (ch.isActive()) { // a connection closed to make room is not answered: its work is skipped
                    answer(ch, headOnly, respond(path));
                }
            });
        } catch (RejectedExecutionException e) {
            ch.close(); // shutting down
        }
    }

    /** On the loop: the request is complete (or refused); nothing more is read from the peer. */
    private void stopReading(Channel ch) {
        reading.remove(ch);
        ch.config().setAutoRead(false);
    }

    private Response respond(String path) {
        try {
            return handler.apply(path);
        } catch (RuntimeException e) {
            log.error("admin request {} failed", path, e);
            return new Response(500, "text/plain", "internal error\n");
        }
    }

    /** The path of a request target ("/metrics?x" → "/metrics"), percent-decoded; null if it is none. */
    private static String path(String target) {
        try {
            String p = URI.create(target).getPath();
            return p == null || p.isEmpty() ? null : p;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Writes the answer (from any thread) and closes the connection once it is written. */
    private static void answer(Channel ch, boolean headOnly, Response r) {
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        StringBuilder h = new StringBuilder("HTTP/1.1 ").append(r.status()).append(' ').append(reason(r.status()))
                .append("\r\nContent-Type: ").append(r.type())
                .append("\r\nContent-Length: ").append(body.length)
                .append("\r\nCache-Control: no-store\r\nConnection: close\r\n");
        if (r.status() == 405) {
            h.append("Allow: GET, HEAD\r\n");
        }
        ByteBuf out = Unpooled.wrappedBuffer(h.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        if (!headOnly) {
            out = Unpooled.wrappedBuffer(out, Unpooled.wrappedBuffer(body));
        }
        ch.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 431 -> "Request Header Fields Too Large";
            case 503 -> "Service Unavailable";
            default -> "Internal Server Error";
        };
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        ownLane.shutdownNow();
        sharedLane.shutdownNow();
    }
}
