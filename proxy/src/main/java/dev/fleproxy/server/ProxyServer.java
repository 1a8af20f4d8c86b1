package dev.fleproxy.server;

import dev.fleproxy.config.Limits;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.tls.ExpiryWarnings;
import dev.fleproxy.tls.ListenerContext;
import dev.fleproxy.tls.UpstreamContext;
import dev.fleproxy.wire.FrameDecoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Accepts client connections and gives each its own {@link ProxySession}. */
public final class ProxyServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProxyServer.class);

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel listener;
    private final AtomicInteger activeSessions = new AtomicInteger();
    /** The client-facing TLS context, reloaded when its files change; null without tls:. */
    private final ListenerContext tls;
    private final UpstreamContext upstreamTls;
    /** Warns while a certificate above nears its end. */
    private final ExpiryWarnings expiry;
    private final ClientBounds bounds;
    /** Where sessions connect: one server, several mongos, or a replica set's primary. */
    private final UpstreamTargets targets;
    /** Looks the upstream names up, off the event loops. */
    private final UpstreamResolver resolver;

    private ProxyServer(ProxyConfig config, List<MessageFilter> filters, ProxyMetrics metrics)
            throws InterruptedException {
        Transport transport = Transport.choose(config.transport());
        String unavailable = transport.unavailabilityCause();
        if (unavailable != null) {
            throw new dev.fleproxy.config.ConfigException("transport " + transport.configName() + " is not available here: "
                    + unavailable);
        }
        ProxyConfig.Upstream up = config.upstream();
        upstreamTls = up.tls() != null ? UpstreamContext.of(up.tls(), up.address()) : null;
        tls = config.listener().tls() != null ? ListenerContext.start(config.listener().tls()) : null;
        expiry = ExpiryWarnings.start(certificates());
        bounds = new ClientBounds(config.listener().limits(), new BadInputLog(LoggerFactory.getLogger(ProxySession.class)));
        resolver = new UpstreamResolver();
        targets = up.form().isReplicaSet()
                ? new ReplicaSetTargets(up.form(), transport, resolver, upstreamTls, up.connectTimeoutMs())
                : new MongosTargets(up.form().addresses());
        UpstreamRoute route = new UpstreamRoute(transport, targets, resolver, up.connectTimeoutMs(), upstreamTls);
        boss = new MultiThreadIoEventLoopGroup(1, transport.handlerFactory());
        workers = new MultiThreadIoEventLoopGroup(transport.handlerFactory());
        try {
            listener = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(transport.serverChannel())
                    .childOption(ChannelOption.AUTO_READ, false)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(clients(config.listener().limits(), route, filters, metrics))
                    .bind(config.listener().address().host(), config.listener().address().port())
                    .sync()
                    .channel();
        } catch (RuntimeException | InterruptedException e) {
            shutdownGroups();
            closeTls();
            targets.close();
            resolver.close();
            throw e;
        }
        log.info("mongo-fle-proxy listening on {}{}, upstream {}{}, transport {}", address(), tls != null ? " (TLS)" : "",
                up.form().describe(), upstreamTls != null ? " (TLS, verifying " + (up.form().addresses().size() > 1
                        && up.tls().serverName() == null ? "each host's name" : upstreamTls.verifiedName()) + ")" : "",
                transport.configName());
    }

    /** What each accepted client connection gets: admitted within the limits, a session with its own upstream. */
    private ChannelInitializer<SocketChannel> clients(Limits limits, UpstreamRoute route, List<MessageFilter> filters,
                                                      ProxyMetrics metrics) {
        ProxySession.SessionListener counter = new ProxySession.SessionListener() {
            @Override
            public void opened(ProxySession session) {
                activeSessions.incrementAndGet();
            }

            @Override
            public void closed(ProxySession session) {
                activeSessions.decrementAndGet();
            }
        };
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ClientBounds.Admission admission = bounds.admit(ch);
                if (admission != ClientBounds.Admission.ADMITTED) {
                    metrics.refusedConnection("max_connections");
                    if (admission == ClientBounds.Admission.ANSWER_AND_CLOSE) {
                        OverLimitRefusal.install(ch, tls, limits.maxConnections());
                    }
                    return; // over maxConnections: no session, no upstream connection
                }
                metrics.accepted();
                ProxySession session = new ProxySession(ch, route, filters, counter, bounds.log(),
                        SessionObserver.of(metrics, ch.eventLoop()));
                if (tls != null) {
                    ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                }
                FrameDecoder frames = new FrameDecoder();
                ch.pipeline().addLast(bounds.guard(frames, session::closeNow), frames,
                        new SessionHandler(session, SessionHandler.Side.CLIENT));
            }
        };
    }

    /** Binds the listen address and starts serving, handshake rewriting only (no encryption). */
    public static ProxyServer start(ProxyConfig config) throws InterruptedException {
        return new ProxyServer(config, List.of(new HandshakeFilter()), ProxyMetrics.DISABLED);
    }

    /** Binds and serves with these filters, applied to each request in order. */
    public static ProxyServer start(ProxyConfig config, List<MessageFilter> filters) throws InterruptedException {
        return new ProxyServer(config, List.copyOf(filters), ProxyMetrics.DISABLED);
    }

    /** Binds and serves with these filters, counting what it does in these metrics. */
    public static ProxyServer start(ProxyConfig config, List<MessageFilter> filters, ProxyMetrics metrics)
            throws InterruptedException {
        return new ProxyServer(config, List.copyOf(filters), metrics);
    }

    /** Whether the listening socket is open. */
    public boolean listening() {
        return listener.isActive();
    }

    /** The event loops (the acceptor's and the connections'), for the liveness check. */
    public List<EventExecutor> eventLoops() {
        List<EventExecutor> loops = new ArrayList<>();
        boss.forEach(loops::add);
        workers.forEach(loops::add);
        return loops;
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** Client connections currently open. */
    public int activeSessions() {
        return activeSessions.get();
    }

    /** The listener's TLS context (reloaded on its own; tests reload it at once), or null. */
    public ListenerContext tls() {
        return tls;
    }

    /**
     * The certificates the proxy presents, by the name metrics and logs give them: {@code
     * listener} (the one in force, it changes on reload) and {@code upstream_client}, each if
     * configured.
     */
    public Map<String, Supplier<X509Certificate>> certificates() {
        Map<String, Supplier<X509Certificate>> all = new LinkedHashMap<>();
        if (tls != null) {
            all.put("listener", tls::certificate);
        }
        if (upstreamTls != null && upstreamTls.clientCertificate() != null) {
            all.put("upstream_client", upstreamTls::clientCertificate);
        }
        return all;
    }

    /** Bytes of incomplete client messages held now, counted against maxBufferedMessageBytes. */
    public long bufferedMessageBytes() {
        return bounds.buffered();
    }

    /** Client connections admitted and not yet closed, counted against maxConnections. */
    public int clientConnections() {
        return bounds.connections();
    }

    ClientBounds bounds() {
        return bounds;
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        shutdownGroups();
        closeTls();
        targets.close();
        resolver.close();
    }

    /** Each upstream address and how it is (readiness): in turn or skipped, or a member's role. */
    public List<String> upstreams() {
        return targets.describe();
    }

    /** Whether new sessions have somewhere to go now: always, but for a replica set without a primary. */
    public boolean upstreamChosen() {
        return !(targets instanceof ReplicaSetTargets rs) || rs.hasPrimary();
    }

    private void closeTls() {
        expiry.close();
        if (tls != null) {
            tls.close();
        }
    }

    private void shutdownGroups() {
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
