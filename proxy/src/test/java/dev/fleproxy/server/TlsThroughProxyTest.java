package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ListenerTls;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.config.UpstreamTls;
import dev.fleproxy.testing.ProxyFixture;
import dev.fleproxy.testing.TestPki;
import dev.fleproxy.tls.TlsProvider;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java driver over TLS through the real proxy to the embedded backend: the client-facing
 * listener (server certificate, client certificates required), and upstream TLS by chaining two
 * proxies (B with upstreamTls → A with tls → backend). Certificates are made by the test.
 */
class TlsThroughProxyTest {
    @TempDir
    static Path dir;
    private static EmbeddedBackend backend;
    private static TestPki pki;
    private static TestPki.Issued server;
    private static TestPki.Issued clientCert;

    @BeforeAll
    static void start() throws Exception {
        backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        pki = new TestPki(dir, "test");
        server = pki.server("proxy", false, "127.0.0.1", "localhost");
        clientCert = pki.client("app", "app");
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    private static ProxyConfig config(int upstreamPort, ListenerTls tls, UpstreamTls upstreamTls) {
        return new ProxyConfig(new HostPort("127.0.0.1", 0), new HostPort("127.0.0.1", upstreamPort), 2000)
                .withTls(tls, upstreamTls);
    }

    private static MongoClient tlsClient(int port, SSLContext ctx) {
        return ProxyFixture.client("mongodb://127.0.0.1:" + port + "/?tls=true", b -> b
                .applyToSslSettings(s -> s.enabled(true).context(ctx))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(3, TimeUnit.SECONDS)));
    }

    private static void crud(MongoClient c, String coll) {
        MongoCollection<Document> people = c.getDatabase("tls").getCollection(coll);
        people.drop();
        people.insertOne(new Document("_id", 1).append("name", "ann"));
        people.updateOne(new Document("_id", 1), new Document("$set", new Document("name", "bob")));
        assertEquals("bob", people.find(new Document("_id", 1)).first().getString("name"));
        assertEquals(1, people.deleteOne(new Document("_id", 1)).getDeletedCount());
    }

    @Test
    void theJavaDriverRunsCrudOverTls() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(config(backend.address().getPort(),
                new ListenerTls(server.certFile(), server.keyFile(), null, ListenerTls.ClientAuth.NONE), null));
             MongoClient c = tlsClient(proxy.address().getPort(), pki.clientContext(null))) {
            crud(c, "plain");
        }
        assertTrue(TlsProvider.describe().startsWith("BoringSSL") || TlsProvider.describe().equals("JDK"),
                TlsProvider.describe());
    }

    @Test
    void withClientAuthRequiredAClientWithoutACertificateIsRefusedInTheHandshake() throws Exception {
        ListenerTls required = new ListenerTls(server.certFile(), server.keyFile(), pki.caFile,
                ListenerTls.ClientAuth.REQUIRED);
        try (ProxyServer proxy = ProxyServer.start(config(backend.address().getPort(), required, null))) {
            try (MongoClient anonymous = tlsClient(proxy.address().getPort(), pki.clientContext(null))) {
                assertThrows(MongoException.class, () -> anonymous.getDatabase("tls").runCommand(new Document("ping", 1)));
            }
            try (MongoClient app = tlsClient(proxy.address().getPort(), pki.clientContext(clientCert))) {
                crud(app, "mutual");
            }
        }
    }

    @Test
    void upstreamTlsChainsTwoProxies() throws Exception {
        try (ProxyServer a = ProxyServer.start(config(backend.address().getPort(),
                new ListenerTls(server.certFile(), server.keyFile(), pki.caFile, ListenerTls.ClientAuth.REQUIRED), null));
             ProxyServer b = ProxyServer.start(config(a.address().getPort(), null,
                     new UpstreamTls(pki.caFile, clientCert.certFile(), clientCert.keyFile(), null)));
             MongoClient c = ProxyFixture.client("mongodb://127.0.0.1:" + b.address().getPort(), x -> { })) {
            crud(c, "chained");
        }
    }
}
