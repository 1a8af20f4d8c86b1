package dev.fleproxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The schema is the one description of the file: the docs, the help and the parsers' defaults agree with it. */
class ConfigSchemaTest {
    private static final Path DOC = Path.of("..", "docs", "configuration.md");
    private static final String BEGIN = "<!-- schema table: begin -->\n";
    private static final String END = "<!-- schema table: end -->";

    @Test
    void theDocsReferenceIsTheSchema() throws IOException {
        String doc = Files.readString(DOC);
        int b = doc.indexOf(BEGIN);
        int e = doc.indexOf(END);
        assertTrue(b >= 0 && e > b, DOC + " keeps the table between " + BEGIN.trim() + " and " + END);
        String expected = doc.substring(0, b + BEGIN.length()) + ConfigSchema.markdown() + doc.substring(e);
        if (Boolean.getBoolean("fleproxy.writeDocs")) {
            Files.writeString(DOC, expected);
        }
        assertEquals(expected, Files.readString(DOC), DOC + " differs from ConfigSchema; rewrite it with "
                + "mvn test -Dtest=ConfigSchemaTest -Dfleproxy.writeDocs=true");
    }

    @Test
    void theHelpNamesEveryKey() {
        String help = String.join("\n", ConfigSchema.helpLines());
        for (ConfigSchema.Setting s : ConfigSchema.all()) {
            assertTrue(help.contains(s.key() + ": " + s.type()), "--help lacks " + s.path());
        }
    }

    @Test
    void whatTheParsersGiveAnAbsentKeyIsTheSchemasDefault() {
        ProxyConfig c = ProxyConfig.parse(new ByteArrayInputStream(("listen: 127.0.0.1:1\nupstream: 127.0.0.1:2\n"
                + "kmip: {host: kms, ca: ca.pem, clientCert: c.pem, clientKey: c.key}\n").getBytes(StandardCharsets.UTF_8)),
                "t.yaml");
        assertEquals(ConfigSchema.UPSTREAM_CONNECT_TIMEOUT_MS.intDefault(), c.upstream().connectTimeoutMs());
        assertEquals(ConfigSchema.TRANSPORT.dflt(), c.transport());
        assertEquals(ConfigSchema.CLIENT_READ_TIMEOUT_MS.intDefault(), c.listener().limits().clientReadTimeoutMs());
        assertEquals(ConfigSchema.MAX_IDLE_TIME_MS.intDefault(), c.listener().limits().maxIdleTimeMs());
        assertEquals(ConfigSchema.MAX_CONNECTIONS.intDefault(), c.listener().limits().maxConnections());
        assertEquals(ConfigSchema.MAX_BUFFERED_MESSAGE_BYTES.longDefault(), c.listener().limits().maxBufferedMessageBytes());
        KmipConfig k = c.kmip();
        assertEquals(ConfigSchema.KMIP_PORT.intDefault(), k.server().port());
        assertEquals(Duration.ofSeconds(ConfigSchema.KMIP_CACHE_TTL_SECONDS.intDefault()), k.cache().ttl());
        assertEquals(Duration.ofSeconds(ConfigSchema.KMIP_OUTAGE_WINDOW_SECONDS.intDefault()), k.cache().outageWindow());
        assertEquals(Duration.ofSeconds(ConfigSchema.KMIP_NEGATIVE_CACHE_SECONDS.intDefault()), k.cache().negativeCache());
        assertEquals(Duration.ofMillis(ConfigSchema.KMIP_KMS_WAIT_MS.intDefault()), k.cache().kmsWait());
        assertEquals(ConfigSchema.KMIP_CONNECTIONS.intDefault(), k.pool().connections());
        assertEquals(ConfigSchema.KMIP_CONNECT_TIMEOUT_MS.intDefault(), k.pool().connectTimeoutMs());
        assertEquals(ConfigSchema.KMIP_READ_TIMEOUT_MS.intDefault(), k.pool().readTimeoutMs());
    }

    @Test
    void everySectionAcceptsExactlyItsKeys() {
        assertEquals(java.util.Set.of("listen", "upstream", "upstreamConnectTimeoutMs", "transport", "kmip", "collections",
                "envelopeSubtype", "tls", "allowPlaintextListen", "upstreamTls", "clientReadTimeoutMs", "maxIdleTimeMs",
                "maxConnections", "maxBufferedMessageBytes", "maxEvaluationBytes", "admin", "identities", "audit", "instance"),
                ConfigSchema.keysOf(""));
        assertEquals(java.util.Set.of("key", "previousKeys", "fields", "suite", "envelopeSubtype", "plaintextReads",
                        "maxScanDocuments"),
                ConfigSchema.keysOf("collections.*"));
    }
}
