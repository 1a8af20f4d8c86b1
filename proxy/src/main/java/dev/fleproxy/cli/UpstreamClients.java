package dev.fleproxy.cli;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.config.UpstreamForm;
import dev.fleproxy.config.UpstreamTls;
import dev.fleproxy.kmip.KmipTls;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** MongoDB driver settings for the upstream of a config, for the commands that talk to it directly. */
final class UpstreamClients {
    private UpstreamClients() {
    }

    /**
     * The upstream of the config, over TLS if it says so (its CA, and a client certificate if
     * given): every address it names, as the replica set it names if it does (the driver then
     * follows its primary, as the proxy does).
     */
    static MongoClientSettings settings(ProxyConfig cfg) {
        UpstreamForm form = cfg.upstream().form();
        return builder(cfg, form.connectionHosts(), form.isReplicaSet() ? "?replicaSet=" + form.replicaSet() : "").build();
    }

    /**
     * A builder for the upstream; {@code options} are appended to the connection string ("" or
     * "?directConnection=true&…").
     */
    static MongoClientSettings.Builder builder(ProxyConfig cfg, HostPort address, String options) {
        return builder(cfg, address.toString(), options);
    }

    private static MongoClientSettings.Builder builder(ProxyConfig cfg, String hosts, String options) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString("mongodb://" + hosts + "/" + options))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(cfg.upstream().connectTimeoutMs(), TimeUnit.MILLISECONDS))
                .applyToSocketSettings(s -> s.connectTimeout(cfg.upstream().connectTimeoutMs(), TimeUnit.MILLISECONDS));
        UpstreamTls tls = cfg.upstream().tls();
        if (tls != null) {
            SSLContext ctx = sslContext(tls);
            b.applyToSslSettings(s -> s.enabled(true).context(ctx));
        }
        return b;
    }

    /** Trusts upstreamTls.ca; presents upstreamTls.cert/key if given. */
    static SSLContext sslContext(UpstreamTls tls) {
        return tls.cert() != null ? KmipTls.fromPem(tls.ca(), tls.cert(), tls.key()) : trusting(tls.ca());
    }

    private static SSLContext trusting(Path caPem) {
        try (InputStream in = Files.newInputStream(caPem)) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (java.io.IOException | java.security.GeneralSecurityException e) {
            throw new ConfigException("upstreamTls.ca " + caPem + ": " + e.getMessage(), e);
        }
    }
}
