package dev.fleproxy.tls;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.UpstreamTls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.X509Certificate;
import java.time.Instant;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * TLS to the upstream ({@code upstreamTls:}): the upstream's certificate must chain to the given
 * CA and name the upstream's host (or {@code serverName:}); host-name verification cannot be
 * turned off. With {@code cert:}/{@code key:} the proxy presents a client certificate (x.509
 * authentication to mongos), checked at start like the listener's ({@link KeyPairCheck}).
 */
public final class UpstreamContext {
    private final SslContext context;
    private final String verifiedName;
    /** Whether the name is upstreamTls.serverName (the same for every address) or the address's host. */
    private final boolean fixedName;
    private final HostPort upstream;
    private final X509Certificate clientCertificate;

    private UpstreamContext(SslContext context, String verifiedName, boolean fixedName, HostPort upstream,
                            X509Certificate clientCertificate) {
        this.context = context;
        this.verifiedName = verifiedName;
        this.fixedName = fixedName;
        this.upstream = upstream;
        this.clientCertificate = clientCertificate;
    }

    public static UpstreamContext of(UpstreamTls t, HostPort upstream) {
        try {
            // the files first, as the listener does: a bad one is the only line, before the TLS provider's
            SslContextBuilder b = SslContextBuilder.forClient().trustManager(t.ca().toFile());
            X509Certificate client = null;
            if (t.cert() != null) {
                b.keyManager(t.cert().toFile(), t.key().toFile());
                client = KeyPairCheck.check("upstreamTls", t.cert(), t.key(), Instant.now());
            }
            b.sslProvider(TlsProvider.get())
                    .protocols(TlsProvider.PROTOCOLS)
                    .endpointIdentificationAlgorithm("HTTPS");
            return new UpstreamContext(b.build(), t.serverName() != null ? t.serverName() : upstream.host(),
                    t.serverName() != null, upstream,
                    client);
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException("upstreamTls: cannot load " + t.ca() + (t.cert() != null ? " / " + t.cert() : "")
                    + ": " + e.getMessage(), e);
        }
    }

    /** The handler for a new upstream connection: it verifies {@link #verifiedName} (and sends it as SNI). */
    public SslHandler newHandler(ByteBufAllocator alloc) {
        return newHandler(alloc, upstream);
    }

    /**
     * The handler for a connection to one of several upstream addresses (mongos, replica-set
     * members): it verifies upstreamTls.serverName if set, else that address's host.
     */
    public SslHandler newHandler(ByteBufAllocator alloc, HostPort target) {
        SslHandler h = context.newHandler(alloc, verifiedName(target), target.port());
        SSLEngine engine = h.engine();
        SSLParameters p = engine.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(p);
        return h;
    }

    /** The proxy's client certificate (the leaf), or null without {@code cert:}. */
    public X509Certificate clientCertificate() {
        return clientCertificate;
    }

    public String verifiedName() {
        return verifiedName;
    }

    /** The name verified for a connection to this address. */
    public String verifiedName(HostPort target) {
        return fixedName ? verifiedName : target.host();
    }
}
