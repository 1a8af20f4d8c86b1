package dev.fleproxy.tls;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.UpstreamTls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * TLS to the upstream ({@code upstreamTls:}): the upstream's certificate must chain to the given
 * CA and name the upstream's host (or {@code serverName:}); host-name verification cannot be
 * turned off. With {@code cert:}/{@code key:} the proxy presents a client certificate (x.509
 * authentication to mongos).
 */
public final class UpstreamContext {
    private final SslContext context;
    private final String verifiedName;
    private final HostPort upstream;

    private UpstreamContext(SslContext context, String verifiedName, HostPort upstream) {
        this.context = context;
        this.verifiedName = verifiedName;
        this.upstream = upstream;
    }

    public static UpstreamContext of(UpstreamTls t, HostPort upstream) {
        try {
            SslContextBuilder b = SslContextBuilder.forClient()
                    .sslProvider(TlsProvider.get())
                    .protocols(TlsProvider.PROTOCOLS)
                    .trustManager(t.ca().toFile())
                    .endpointIdentificationAlgorithm("HTTPS");
            if (t.cert() != null) {
                b.keyManager(t.cert().toFile(), t.key().toFile());
            }
            return new UpstreamContext(b.build(), t.serverName() != null ? t.serverName() : upstream.host(), upstream);
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException("upstreamTls: cannot load " + t.ca() + (t.cert() != null ? " / " + t.cert() : "")
                    + ": " + e.getMessage(), e);
        }
    }

    /** The handler for a new upstream connection: it verifies {@link #verifiedName} (and sends it as SNI). */
    public SslHandler newHandler(ByteBufAllocator alloc) {
        SslHandler h = context.newHandler(alloc, verifiedName, upstream.port());
        SSLEngine engine = h.engine();
        SSLParameters p = engine.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(p);
        return h;
    }

    public String verifiedName() {
        return verifiedName;
    }
}
