package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.tls.TlsFailures;
import dev.fleproxy.tls.UpstreamContext;
import dev.fleproxy.wire.FrameDecoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import java.util.function.Consumer;

/**
 * How each session reaches the upstream: where, over which transport, within what connect timeout,
 * and with what TLS (null: none). A connection is usable only once its TLS is verified.
 */
record UpstreamRoute(Transport transport, HostPort address, int connectTimeoutMs, UpstreamContext tls) {

    /**
     * Connects on the client's event loop, the session's frames read by {@code session}'s upstream
     * handler; {@code ready} gets the usable channel, {@code unavailable} why there is none. Returns
     * the channel at once (connecting), so the session can close it early.
     */
    Channel connect(ProxySession session, Channel client, Consumer<Channel> ready, Consumer<String> unavailable) {
        return new Bootstrap()
                .group(client.eventLoop())
                .channel(transport.socketChannel())
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new FrameDecoder(), new SessionHandler(session, SessionHandler.Side.UPSTREAM));
                    }
                })
                .connect(address.host(), address.port())
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        unavailable.accept("upstream " + address + " is unreachable: " + describe(f.cause()));
                    } else if (tls == null) {
                        ready.accept(f.channel());
                    } else {
                        // usable once its certificate is checked; a failed check is the client's 9720001
                        f.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(h -> {
                            if (h.isSuccess()) {
                                ready.accept(f.channel());
                            } else {
                                f.channel().close();
                                unavailable.accept("TLS to upstream " + address + " (verifying " + tls.verifiedName()
                                        + ") failed: " + TlsFailures.describe(h.cause()));
                            }
                        });
                        f.channel().read(); // the handshake needs reads; AUTO_READ is off
                    }
                }).channel();
    }

    private static String describe(Throwable t) {
        String msg = t.getMessage();
        return msg == null ? t.getClass().getSimpleName() : msg;
    }
}
