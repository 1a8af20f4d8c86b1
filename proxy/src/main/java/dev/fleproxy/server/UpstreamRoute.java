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
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * How each session reaches the upstream: which address ({@link UpstreamTargets}), over which
 * transport, within what connect timeout, and with what TLS (null: none). A connection is usable
 * only once its TLS is verified; one that fails moves on to the next address the targets gave.
 */
record UpstreamRoute(Transport transport, UpstreamTargets targets, UpstreamResolver resolver, int connectTimeoutMs,
                     UpstreamContext tls) {

    /**
     * Connects on the client's event loop, the session's frames read by {@code session}'s upstream
     * handler; {@code ready} gets the usable channel (the session is bound to its address first),
     * {@code unavailable} why there is none. Each attempt's channel is handed to
     * {@link ProxySession#connecting} at once, so the session can close it early.
     */
    void connect(ProxySession session, Channel client, Consumer<Channel> ready, Consumer<String> unavailable) {
        targets.choose(client.eventLoop(), addresses -> attempt(session, client, addresses, 0, new ArrayList<>(), ready,
                unavailable), unavailable);
    }

    private void attempt(ProxySession session, Channel client, List<HostPort> addresses, int i, List<String> failures,
                         Consumer<Channel> ready, Consumer<String> unavailable) {
        if (session.isClosed()) {
            return;
        }
        HostPort address = addresses.get(i);
        Consumer<String> next = why -> {
            targets.failed(address, why);
            failures.add(why);
            if (i + 1 < addresses.size()) {
                attempt(session, client, addresses, i + 1, failures, ready, unavailable);
            } else {
                unavailable.accept(String.join("; ", failures));
            }
        };
        // the name is looked up off the loop (UpstreamResolver); the connect goes on on the loop
        CompletableFuture<InetSocketAddress> resolved = resolver.resolve(address);
        if (resolved.isDone()) {
            connectTo(session, client, address, resolved, next, ready);
        } else {
            resolved.whenComplete((ok, failed) -> client.eventLoop().execute(() ->
                    connectTo(session, client, address, resolved, next, ready)));
        }
    }

    private void connectTo(ProxySession session, Channel client, HostPort address,
                           CompletableFuture<InetSocketAddress> resolved, Consumer<String> next, Consumer<Channel> ready) {
        if (session.isClosed()) {
            return;
        }
        InetSocketAddress to;
        try {
            to = resolved.join();
        } catch (CompletionException | CancellationException e) {
            next.accept("upstream " + address + " cannot be looked up: " + describe(e.getCause() != null ? e.getCause() : e));
            return;
        }
        session.connecting(bootstrap(client.eventLoop(), transport, connectTimeoutMs)
                .option(ChannelOption.AUTO_READ, false)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc(), address));
                        }
                        ch.pipeline().addLast(new FrameDecoder(), new SessionHandler(session, SessionHandler.Side.UPSTREAM));
                    }
                })
                .connect(to)
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess() && session.isClosed()) {
                        return; // the client left while it connected: closed by us, not the upstream's failure
                    }
                    if (!f.isSuccess()) {
                        next.accept("upstream " + address + " is unreachable: " + describe(f.cause()));
                    } else if (tls == null) {
                        bind(session, address, f.channel(), ready);
                    } else {
                        // usable once its certificate is checked; a failed check is the client's 9720001
                        f.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(h -> {
                            if (h.isSuccess()) {
                                bind(session, address, f.channel(), ready);
                            } else if (session.isClosed()) {
                                f.channel().close(); // the client left during the handshake
                            } else {
                                f.channel().close();
                                next.accept("TLS to upstream " + address + " (verifying " + tls.verifiedName(address)
                                        + ") failed: " + TlsFailures.describe(h.cause()));
                            }
                        });
                        f.channel().read(); // the handshake needs reads; AUTO_READ is off
                    }
                }).channel());
    }

    /** A connection to an upstream address on this loop: the transport's sockets, no Nagle, the connect timeout. */
    static Bootstrap bootstrap(io.netty.channel.EventLoop loop, Transport transport, int connectTimeoutMs) {
        return new Bootstrap().group(loop).channel(transport.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs);
    }

    private void bind(ProxySession session, HostPort address, Channel ch, Consumer<Channel> ready) {
        session.boundTo(address);
        targets.bound(address, session);
        ready.accept(ch);
    }

    private static String describe(Throwable t) {
        String msg = t.getMessage();
        return msg == null ? t.getClass().getSimpleName() : msg;
    }
}
