package dev.fleproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.testing.KmsFixture;
import dev.fleproxy.testing.TestPki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code fle-proxy check} on config files and certificates made here: the file, the certificate
 * checks, the table, the exit codes; online, the embedded backend as the upstream (the KMS part
 * runs against PyKMIP in proxy/tests/test_check.py).
 */
class CheckCommandTest {
    static final String AES = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";
    static final String ARIA = "da6fd698-4681-3bb5-88ad-d1d9d68b1df6";

    @TempDir
    static Path dir;
    static TestPki pki;
    static TestPki.Issued server;
    static TestPki.Issued kmipClient;
    static EmbeddedBackend backend;

    @BeforeAll
    static void setUp() throws Exception {
        pki = new TestPki(dir, "check");
        server = ec("server", -1, 90); // EC: an RSA key takes seconds to make on a busy machine
        kmipClient = ec("kmip-client", -1, 90);
        backend = EmbeddedBackend.start("127.0.0.1", 0, null);
    }

    @AfterAll
    static void tearDown() {
        backend.close();
    }

    /** A certificate for 127.0.0.1 (CN=server) with an EC key, valid from/until so many days from now. */
    static TestPki.Issued ec(String file, int fromDays, int untilDays) throws Exception {
        Instant now = Instant.now();
        return pki.issue(file, "EC", now.plus(Duration.ofDays(fromDays)), now.plus(Duration.ofDays(untilDays)));
    }

    record Result(int exit, List<String> lines) {
        String text() {
            return String.join("\n", lines);
        }

        boolean has(String start) {
            return lines.stream().anyMatch(l -> l.startsWith(start));
        }
    }

    static Result check(String yaml, String... options) throws Exception {
        return check(dir, yaml, options);
    }

    /** Runs {@code fle-proxy check --config F} on this YAML, written in {@code in}. */
    static Result check(Path in, String yaml, String... options) throws Exception {
        Path file = Files.createTempFile(in, "check", ".yaml");
        Files.writeString(file, yaml);
        StringWriter out = new StringWriter();
        List<String> args = new ArrayList<>(List.of("check", "--config", file.toString()));
        args.addAll(List.of(options));
        int exit = new CommandLine(new Main()).setOut(new PrintWriter(out, true)).execute(args.toArray(new String[0]));
        return new Result(exit, out.toString().lines().toList());
    }

    static String listenerTls(TestPki.Issued cert, Path key) {
        return "tls:\n  cert: " + cert.certFile() + "\n  key: " + key + "\n";
    }

    static String kmip(TestPki.Issued client) {
        return "kmip:\n  host: 127.0.0.1\n  port: 5696\n  ca: " + pki.caFile + "\n  clientCert: " + client.certFile()
                + "\n  clientKey: " + client.keyFile() + "\n";
    }

    static final String COLLECTIONS = "collections:\n"
            + "  hr.people:\n    key: " + AES + "\n    previousKeys: [" + ARIA + "]\n"
            + "    fields:\n      ssn: {deterministic: true}\n      name: {}\n"
            + "  ycsb.usertable: {key: " + ARIA + ", fields: \"*\", suite: ARIA_CBC_HMAC, plaintextReads: allow}\n";

    static String base(int upstreamPort) {
        return "listen: 127.0.0.1:27018\nupstream: 127.0.0.1:" + upstreamPort + "\n";
    }

    @Test
    void aGoodConfigOfflineIsExitZeroWithThePolicyTable() throws Exception {
        Result r = check(base(1) + listenerTls(server, server.keyFile()) + kmip(kmipClient) + COLLECTIONS, "--offline");
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.has("ok    schema: "), r.text());
        assertTrue(r.has("ok    tls: certificate " + server.certFile() + " (CN=server) and its key load"), r.text());
        assertTrue(r.has("ok    kmip: certificate " + kmipClient.certFile()), r.text());
        assertTrue(r.has("ok    kmip.ca: " + pki.caFile), r.text());
        assertTrue(r.has("--    kms, upstream: not asked (--offline)"), r.text());
        List<String> table = r.lines().stream().filter(l -> l.contains(" | ")).toList();
        assertEquals(3, table.size(), r.text()); // the header and one row per collection, in namespace order
        assertEquals(List.of("namespace", "key", "algorithm", "suite", "fields", "previous keys", "plaintextReads"),
                cells(table.get(0)));
        assertEquals(List.of("hr.people", AES, "?", "?", "name, ssn (det)", ARIA, "deny"), cells(table.get(1)));
        assertEquals(List.of("ycsb.usertable", ARIA, "?", "ARIA_CBC_HMAC", "* (every field but _id)", "-", "allow"),
                cells(table.get(2)));
        assertEquals("check: configuration ok", r.lines().get(r.lines().size() - 1));
    }

    private static List<String> cells(String row) {
        return List.of(row.split("\\s*\\|\\s*")).stream().map(String::strip).toList();
    }

    @Test
    void aMissingCertificateFileIsAFailNamingTheKeyAndTheFile() throws Exception {
        Path missing = dir.resolve("nowhere/server.key");
        Result r = check(base(1) + listenerTls(server, missing), "--offline");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.has("FAIL  tls.key: " + missing + " does not exist"), r.text());
        assertEquals("check: 1 FAIL, 0 WARN", r.lines().get(r.lines().size() - 1));
    }

    @Test
    void anExpiredCertificateFails() throws Exception {
        TestPki.Issued old = ec("expired", -10, -3);
        Result r = check(base(1) + listenerTls(old, old.keyFile()), "--offline");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.has("FAIL  tls: the certificate " + old.certFile() + " has expired: valid until "), r.text());
    }

    @Test
    void aKmipClientCertificateNotYetValidFails() throws Exception {
        TestPki.Issued future = ec("future", 1, 60);
        Result r = check(base(1) + kmip(future), "--offline");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.has("FAIL  kmip: the certificate " + future.certFile() + " is not valid yet: valid from "), r.text());
    }

    @Test
    void aCertificateEndingWithinTheProxysWarningPeriodIsAWarnNotAFail() throws Exception {
        TestPki.Issued soon = ec("soon", -1, 10);
        Result r = check(base(1) + listenerTls(soon, soon.keyFile()), "--offline");
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.has("WARN  tls: the listener TLS certificate (CN=server) expires in 9 days, on "), r.text());
        assertEquals("check: configuration ok, 1 WARN", r.lines().get(r.lines().size() - 1));
    }

    @Test
    void aKeyThatIsNotTheCertificatesFailsWithoutShowingIt() throws Exception {
        TestPki.Issued other = ec("other", -1, 90);
        Result r = check(base(1) + listenerTls(server, other.keyFile()), "--offline");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.has("FAIL  tls: the key " + other.keyFile() + " does not belong to the certificate "
                + server.certFile()), r.text());
        String key = Files.readString(other.keyFile());
        assertFalse(r.text().contains(key.substring(40, 80)), r.text());
    }

    @Test
    void aFileThatDoesNotParseIsOneFailWithTheParsersMessageAndNoTable() throws Exception {
        Result r = check(base(1) + kmip(kmipClient) + "collections:\n  hr.people:\n    key: " + AES
                + "\n    fields: {ssn: {}}\n  hr.people:\n    key: " + ARIA + "\n    fields: {name: {}}\n");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.lines().get(0).startsWith("FAIL  schema: "), r.text());
        assertTrue(r.lines().get(0).contains("duplicate key 'hr.people'"), r.text());
        assertFalse(r.text().contains(" | "), r.text());
    }

    @Test
    void aBadNamespaceIsTheParsersMessage() throws Exception {
        Result r = check(base(1) + kmip(kmipClient) + "collections:\n  nodot: {key: " + AES + ", fields: \"*\"}\n");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.lines().get(0).startsWith("FAIL  schema: ") && r.lines().get(0).contains("collections.nodot"),
                r.text());
    }

    @Test
    void aListenerOffLoopbackWithoutTlsFailsAsTheStartWould() throws Exception {
        Result r = check("listen: 0.0.0.0:27018\nupstream: 127.0.0.1:1\n", "--offline");
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.has("FAIL  listen: 0.0.0.0:27018 is not a loopback address"), r.text());
    }

    @Test
    void theEmbeddedBackendIsAStandaloneServer() throws Exception {
        Result r = check(base(backend.address().getPort()));
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.has("ok    kms: none configured"), r.text());
        assertTrue(r.has("ok    upstream: 127.0.0.1:" + backend.address().getPort() + " is a standalone server, "
                + "maxWireVersion 13, version 5.0.0"), r.text());
        assertTrue(r.has("policy: no collections"), r.text());
    }

    @Test
    void theLogIsQuietOnlyWhileTheCheckRuns() throws Exception {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
                .getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.classic.Level before = root.getLevel();
        check(base(1), "--offline");
        assertEquals(before, root.getLevel()); // the tests after this one capture INFO lines
    }

    @Test
    void anUpstreamPortWithNothingBehindItFails() throws Exception {
        int port = KmsFixture.freePort();
        Result r = check(base(port));
        assertEquals(2, r.exit(), r.text());
        assertTrue(r.has("FAIL  upstream: cannot connect to 127.0.0.1:" + port + " (within upstreamConnectTimeoutMs "
                + ProxyConfig.DEFAULT_CONNECT_TIMEOUT_MS + "): Connection refused"), r.text());
    }
}
