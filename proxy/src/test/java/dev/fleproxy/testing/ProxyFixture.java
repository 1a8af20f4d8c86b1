package dev.fleproxy.testing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.server.ProxyServer;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** The real embedded backend and the real proxy in front of it, each on a free port. */
public final class ProxyFixture implements AutoCloseable {
    private final EmbeddedBackend backend;
    private final ProxyServer proxy;

    private ProxyFixture(EmbeddedBackend backend, ProxyServer proxy) {
        this.backend = backend;
        this.proxy = proxy;
    }

    public static ProxyFixture start() throws InterruptedException {
        EmbeddedBackend backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        try {
            return new ProxyFixture(backend, startProxy(backend.address().getPort()));
        } catch (RuntimeException | InterruptedException e) {
            backend.close();
            throw e;
        }
    }

    public static ProxyServer startProxy(int upstreamPort) throws InterruptedException {
        return ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0),
                new HostPort("127.0.0.1", upstreamPort), 2000));
    }

    public ProxyServer proxy() {
        return proxy;
    }

    public String directUri() {
        return "mongodb://127.0.0.1:" + backend.address().getPort();
    }

    public String proxyUri() {
        return "mongodb://127.0.0.1:" + proxy.address().getPort();
    }

    public MongoClient directClient() {
        return client(directUri(), b -> { });
    }

    public MongoClient proxyClient() {
        return client(proxyUri(), b -> { });
    }

    public static MongoClient client(String uri, Consumer<MongoClientSettings.Builder> tweak) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS));
        tweak.accept(b);
        return MongoClients.create(b.build());
    }

    @Override
    public void close() {
        proxy.close();
        backend.close();
    }
}
