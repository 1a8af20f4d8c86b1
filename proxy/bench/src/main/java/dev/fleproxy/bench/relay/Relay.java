package dev.fleproxy.bench.relay;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The floor the proxy is compared with: a byte relay with the proxy's connection model and
 * backpressure, and nothing else. Each accepted connection gets its own upstream connection on
 * the same event loop; whatever one side sends is written to the other as the very buffers read
 * (no framing, no parsing). AUTO_READ is off on both sides: a side is read again only once every
 * write of its previous read has reached the socket, and writes are flushed when a read batch
 * completes, as the proxy does. TCP_NODELAY on both sides. When either side closes, the other is
 * closed after what was already written to it is flushed.
 */
public final class Relay implements AutoCloseable {
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel listener;

    private Relay(HostPort listen, HostPort upstream, RelayTransport transport, int connectTimeoutMs)
            throws InterruptedException {
        boss = new MultiThreadIoEventLoopGroup(1, transport.handlerFactory());
        workers = new MultiThreadIoEventLoopGroup(transport.handlerFactory());
        try {
            listener = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(transport.serverChannel())
                    .childOption(ChannelOption.AUTO_READ, false)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new ClientSide(upstream, transport, connectTimeoutMs));
                        }
                    })
                    .bind(listen.host(), listen.port())
                    .sync()
                    .channel();
        } catch (RuntimeException | InterruptedException e) {
            shutdown();
            throw e;
        }
    }

    /** Binds and starts relaying; throws the bind failure (Netty rethrows it undeclared). */
    public static Relay start(HostPort listen, HostPort upstream, RelayTransport transport, int connectTimeoutMs)
            throws InterruptedException {
        return new Relay(listen, upstream, transport, connectTimeoutMs);
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        shutdown();
    }

    private void shutdown() {
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Flushes what was written to the channel, then closes it. */
    static void closeAfterFlush(Channel ch) {
        if (ch != null && ch.isActive()) {
            ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** The accepted connection: connects its upstream, then pumps client → upstream. */
    private static final class ClientSide extends Pump {
        private final HostPort upstream;
        private final RelayTransport transport;
        private final int connectTimeoutMs;

        ClientSide(HostPort upstream, RelayTransport transport, int connectTimeoutMs) {
            this.upstream = upstream;
            this.transport = transport;
            this.connectTimeoutMs = connectTimeoutMs;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel client = ctx.channel();
            Pump upstreamSide = new Pump();
            new Bootstrap()
                    .group(client.eventLoop())
                    .channel(transport.socketChannel())
                    .option(ChannelOption.AUTO_READ, false)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                    .handler(upstreamSide)
                    .connect(upstream.host(), upstream.port())
                    .addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            client.close();
                            return;
                        }
                        Channel up = f.channel();
                        if (!client.isActive()) {
                            up.close();
                            return;
                        }
                        pair(client, up);
                        upstreamSide.pair(up, client);
                        client.read();
                        up.read();
                    });
        }
    }

    /**
     * One direction: what its channel reads is written to the peer (not flushed), flushed when
     * the read batch completes, and the channel is read again once all those writes are done.
     * Everything runs on the pair's one event loop, so the counters need no locking.
     */
    static class Pump extends ChannelInboundHandlerAdapter {
        private final ChannelFutureListener writeDone = this::writeDone;
        private Channel self;
        private Channel peer;
        private int inFlight;
        private boolean batchDone;

        final void pair(Channel self, Channel peer) {
            this.self = self;
            this.peer = peer;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (peer == null || !peer.isActive()) {
                ReferenceCountUtil.release(msg);
                return;
            }
            inFlight++;
            peer.write(msg).addListener(writeDone);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (peer != null) {
                peer.flush();
            }
            batchDone = true;
            maybeRead();
        }

        private void writeDone(ChannelFuture f) {
            inFlight--;
            if (!f.isSuccess()) {
                self.close();
                peer.close();
                return;
            }
            maybeRead();
        }

        private void maybeRead() {
            if (batchDone && inFlight == 0 && self != null && self.isActive()) {
                batchDone = false;
                self.read();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closeAfterFlush(peer);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A reset or broken pipe from either end: the pair is over; nothing to log per connection.
            ctx.close();
            closeAfterFlush(peer);
        }
    }
}
