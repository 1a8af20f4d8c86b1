package dev.fleproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ListenerTls;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.server.ProxyServer;
import dev.fleproxy.testing.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upstream check over upstreamTls: a proxy with a TLS listener (client certificates required)
 * in front of the embedded backend stands in for a TLS mongod; and what hello replies say.
 */
class UpstreamCheckTest {
    @TempDir
    static Path dir;
    static TestPki pki;
    static TestPki.Issued client;
    static EmbeddedBackend backend;
    static ProxyServer tlsUpstream;

    @BeforeAll
    static void setUp() throws Exception {
        pki = new TestPki(dir, "upstream");
        TestPki.Issued server = pki.server("upstream", false, "127.0.0.1", "localhost");
        client = pki.issue("proxy-client", "EC", Instant.now().minusSeconds(60), Instant.now().plus(Duration.ofDays(90)));
        backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        tlsUpstream = ProxyServer.start(new ProxyConfig(new HostPort("127.0.0.1", 0),
                new HostPort("127.0.0.1", backend.address().getPort()), 2000).withTls(new ListenerTls(server.certFile(),
                server.keyFile(), pki.caFile, ListenerTls.ClientAuth.REQUIRED), null));
    }

    @AfterAll
    static void tearDown() {
        tlsUpstream.close();
        backend.close();
    }

    private static CheckCommandTest.Result check(String serverName) throws Exception {
        return CheckCommandTest.check(dir, "listen: 127.0.0.1:27018\nupstream: 127.0.0.1:" + tlsUpstream.address().getPort()
                + "\nupstreamTls:\n  ca: " + pki.caFile + "\n  cert: " + client.certFile() + "\n  key: " + client.keyFile()
                + "\n" + (serverName != null ? "  serverName: " + serverName + "\n" : ""));
    }

    @Test
    void overUpstreamTlsTheCertificateIsVerifiedAndHelloAnswered() throws Exception {
        CheckCommandTest.Result r = check(null);
        assertEquals(0, r.exit(), r.text());
        String up = "127.0.0.1:" + tlsUpstream.address().getPort();
        assertTrue(r.has("ok    upstreamTls: certificate " + client.certFile() + " (CN=server) and its key"), r.text());
        assertTrue(r.has("ok    upstreamTls.ca: " + pki.caFile), r.text());
        assertTrue(r.has("ok    upstreamTls: " + up + " presents a certificate from " + pki.caFile + " naming 127.0.0.1"),
                r.text());
        assertTrue(r.has("ok    upstream: " + up + " is a standalone server"), r.text());
    }

    @Test
    void serverNameIsTheNameVerified() throws Exception {
        CheckCommandTest.Result r = check("localhost");
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.lines().stream().anyMatch(l -> l.startsWith("ok    upstreamTls: ") && l.contains(" naming localhost")),
                r.text());
        assertTrue(r.has("ok    upstream: "), r.text());
    }

    @Test
    void aCertificateThatDoesNotNameTheServerNameFails() throws Exception {
        CheckCommandTest.Result r = check("db.example.com");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.lines().stream().anyMatch(l -> l.startsWith("FAIL  upstreamTls: the handshake with ")
                && l.contains("(verifying db.example.com) failed: its certificate does not name this host")), r.text());
    }

    @Test
    void helloRepliesAreTold() {
        assertEquals("a mongos (sharded cluster)", UpstreamCheck.describe(new Document("msg", "isdbgrid")
                .append("isWritablePrimary", true)));
        assertEquals("the primary of replica set rs0", UpstreamCheck.describe(new Document("setName", "rs0")
                .append("isWritablePrimary", true).append("secondary", false)));
        assertEquals("a secondary of replica set rs0", UpstreamCheck.describe(new Document("setName", "rs0")
                .append("isWritablePrimary", false).append("secondary", true)));
        assertEquals("the primary of replica set rs1", UpstreamCheck.describe(new Document("setName", "rs1")
                .append("ismaster", true))); // isMaster, before MongoDB 4.4.2
        assertEquals("an arbiter of replica set rs0", UpstreamCheck.describe(new Document("setName", "rs0")
                .append("arbiterOnly", true)));
        assertEquals("a standalone server", UpstreamCheck.describe(new Document("isWritablePrimary", true)));
    }
}
