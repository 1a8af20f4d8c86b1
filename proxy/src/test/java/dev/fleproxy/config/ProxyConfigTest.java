package dev.fleproxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProxyConfigTest {

    private static ProxyConfig parse(String yaml) {
        return ProxyConfig.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "test.yaml");
    }

    /** The config and its policy, as the proxy reads them at start and on reload. */
    private static dev.fleproxy.policy.Policy policy(String yaml) {
        return dev.fleproxy.policy.PolicyParser.parse(parse(yaml).policySection());
    }

    private static String error(String yaml) {
        return assertThrows(ConfigException.class, () -> policy(yaml)).getMessage();
    }

    @Test
    void readsTheAdminListenerAndKeepsItOffTheDataPort() {
        assertEquals(null, parse("listen: 127.0.0.1:1\nupstream: b:2\n").admin());
        assertEquals(new HostPort("127.0.0.1", 9464), parse("listen: 127.0.0.1:1\nupstream: b:2\nadmin: 127.0.0.1:9464\n")
                .admin());
        ConfigException e = assertThrows(ConfigException.class,
                () -> parse("listen: 127.0.0.1:27018\nupstream: b:2\nadmin: 0.0.0.0:27018\n"));
        assertTrue(e.getMessage().contains("data port"), e.getMessage());
        assertThrows(ConfigException.class, () -> parse("listen: 127.0.0.1:1\nupstream: b:2\nadmin: nowhere\n"));
    }

    @Test
    void readsListenUpstreamAndTimeout() {
        ProxyConfig c = parse("listen: 0.0.0.0:27018\nupstream: mongos.internal:27017\nupstreamConnectTimeoutMs: 1500\n");
        assertEquals(new HostPort("0.0.0.0", 27018), c.listener().address());
        assertEquals(new HostPort("mongos.internal", 27017), c.upstream().address());
        assertEquals(1500, c.upstream().connectTimeoutMs());
        assertEquals(ProxyConfig.DEFAULT_CONNECT_TIMEOUT_MS,
                parse("listen: 127.0.0.1:1\nupstream: '[::1]:2'\n").upstream().connectTimeoutMs());
        assertEquals(new HostPort("::1", 2), parse("listen: 127.0.0.1:1\nupstream: '[::1]:2'\n").upstream().address());
    }

    @Test
    void readsTlsOnBothSidesAndTheLimits() {
        ProxyConfig c = parse("listen: 0.0.0.0:1\nupstream: b:2\ntls:\n  cert: p.pem\n  key: p.key\n  clientCA: ca.pem\n"
                + "  clientAuth: required\nupstreamTls:\n  ca: m.pem\n  serverName: mongos.internal\n"
                + "clientReadTimeoutMs: 500\nmaxConnections: 7\nmaxBufferedMessageBytes: 100000000\n");
        assertEquals(ListenerTls.ClientAuth.REQUIRED, c.listener().tls().clientAuth());
        assertEquals("mongos.internal", c.upstream().tls().serverName());
        assertEquals(new Limits(500, 0, 7, 100_000_000L), c.listener().limits());
        assertEquals(null, c.plaintextListenProblem(), "TLS on the listener");
        assertEquals(Limits.DEFAULT, parse("listen: a:1\nupstream: b:2\n").listener().limits());

        assertTrue(error("listen: a:1\nupstream: b:2\ntls:\n  cert: p\n  key: k\n  clientAuth: required\n")
                .contains("tls.clientAuth required needs clientCA"));
        assertTrue(error("listen: a:1\nupstream: b:2\ntls:\n  cert: p\n  key: k\n  clientAuth: maybe\n")
                .contains("must be none, optional or required"));
        assertTrue(error("listen: a:1\nupstream: b:2\ntls:\n  cert: p\n").contains("tls.key is missing"));
        assertTrue(error("listen: a:1\nupstream: b:2\nupstreamTls:\n  ca: c\n  cert: x\n")
                .contains("upstreamTls.key is missing"));
        assertTrue(error("listen: a:1\nupstream: b:2\nmaxBufferedMessageBytes: 1000\n").contains("at least 48000000"));
        assertTrue(error("listen: a:1\nupstream: b:2\nallowPlaintextListen: yes please\n").contains("true or false"));
    }

    @Test
    void aListenerOffLoopbackNeedsTlsOrAnExplicitAllowance() {
        for (String host : new String[] {"127.0.0.1", "127.3.4.5", "localhost", "[::1]"}) {
            assertEquals(null, parse("listen: '" + host + ":1'\nupstream: b:2\n").plaintextListenProblem(), host);
        }
        for (String host : new String[] {"0.0.0.0", "10.0.0.5", "proxy.internal", "[::]", "127.0.0.1.example"}) {
            String problem = parse("listen: '" + host + ":1'\nupstream: b:2\n").plaintextListenProblem();
            assertTrue(problem != null && problem.contains("is not a loopback address and there is no tls: section"), host);
            assertEquals(null, parse("listen: '" + host + ":1'\nupstream: b:2\nallowPlaintextListen: true\n")
                    .plaintextListenProblem(), host);
        }
    }

    @Test
    void readsTheKmipSectionWithPathsRelativeToTheFile() {
        ProxyConfig c = ProxyConfig.parse(new ByteArrayInputStream(("listen: a:1\nupstream: b:2\nkmip:\n"
                + "  host: kms\n  ca: certs/ca.pem\n  clientCert: certs/proxy.pem\n  clientKey: /abs/proxy.key\n"
                + "  cacheTtlSeconds: 60\n").getBytes(StandardCharsets.UTF_8)), "p.yaml", java.nio.file.Path.of("/etc/fle"));
        KmipConfig k = c.kmip();
        assertEquals("kms", k.server().host());
        assertEquals(5696, k.server().port());
        assertEquals(java.nio.file.Path.of("/etc/fle/certs/ca.pem"), k.identity().ca());
        assertEquals(java.nio.file.Path.of("/abs/proxy.key"), k.identity().clientKey());
        assertEquals(60, k.cache().ttl().toSeconds());
        assertEquals(900, k.cache().outageWindow().toSeconds());
        assertTrue(!k.toString().contains("Password"));
        assertEquals(null, k.server().serverName(), "the certificate must name kmip.host");
    }

    @Test
    void readsKmipServerName() {
        assertEquals("kms.internal", parse(KMIP + "  serverName: kms.internal\n").kmip().server().serverName());
        assertEquals("10.0.0.7", parse(KMIP + "  serverName: 10.0.0.7\n").kmip().server().serverName());
        assertTrue(error(KMIP + "  serverName: 'not a name'\n").contains("kmip.serverName must be a DNS name or an IP "
                + "address"), error(KMIP + "  serverName: 'not a name'\n"));
        assertTrue(error(KMIP + "  serverName: ''\n").contains("kmip.serverName"));
    }

    @Test
    void saysWhatIsWrongInTheKmipSection() {
        assertTrue(error("listen: a:1\nupstream: b:2\nkmip:\n  host: k\n  ca: c\n").contains("give exactly one client identity"));
        assertTrue(error("listen: a:1\nupstream: b:2\nkmip:\n  host: k\n  ca: c\n  clientPkcs12: p\n  clientCert: x\n")
                .contains("give exactly one client identity"));
        assertTrue(error("listen: a:1\nupstream: b:2\nkmip:\n  host: k\n  ca: c\n  clientPkcs12: p\n  port: 70000\n")
                .contains("kmip.port must be an integer 1-65535"));
        assertTrue(error("listen: a:1\nupstream: b:2\nkmip:\n  hots: k\n").contains("kmip: unknown key(s) [hots]"));
    }

    @Test
    void saysWhatIsWrong() {
        assertTrue(error("upstream: a:1\n").contains("listen is missing"));
        assertTrue(error("listen: a:1\nupstream: b\n").contains("upstream 'b' is not HOST:PORT"));
        assertTrue(error("listen: a:99999\nupstream: b:1\n").contains("outside 0-65535"));
        assertTrue(error("listen: a:1\nupstream: b:1\nupstrem: c:1\n").contains("unknown key(s) [upstrem]"));
        assertTrue(error("listen: a:1\nupstream: b:1\nupstreamConnectTimeoutMs: -5\n").contains("positive integer"));
        assertTrue(error("- just\n- a list\n").contains("must be a YAML mapping"));
        assertTrue(error("listen: [unclosed\n").contains("not valid YAML"));
    }

    private static final String KMIP = "listen: a:1\nupstream: b:2\nkmip:\n  host: k\n  ca: c\n  clientPkcs12: p\n";
    private static final String KEY = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";

    @Test
    void readsTheCollectionsPolicy() {
        dev.fleproxy.policy.Policy c = policy(KMIP + "envelopeSubtype: 0\ncollections:\n"
                + "  ycsb.usertable: { key: " + KEY + ", fields: \"*\" }\n"
                + "  hr.people:\n    key: " + KEY + "\n    suite: AES_CBC_HMAC\n    envelopeSubtype: 6\n"
                + "    fields:\n      ssn: { deterministic: true }\n      address.street: {}\n"
                + "  hr.list: { key: " + KEY + ", fields: [a, { b.c: { deterministic: true } }] }\n");
        dev.fleproxy.policy.CollectionPolicy all = c.get("ycsb", "usertable");
        assertTrue(all.allFields());
        assertEquals(0, all.subtype());
        assertEquals(null, all.suite());
        dev.fleproxy.policy.CollectionPolicy people = c.get("hr.people");
        assertEquals(dev.fleproxy.crypto.CipherSuite.AES_CBC_HMAC, people.suite());
        assertEquals(6, people.subtype());
        assertTrue(people.fields().get("ssn").deterministic());
        assertTrue(!people.fields().get("address.street").deterministic());
        assertTrue(c.get("hr.list").fields().get("b.c").deterministic());
        assertEquals(null, c.get("hr.other"));
    }

    @Test
    void saysWhatIsWrongInTheCollectionsPolicy() {
        assertTrue(error("listen: a:1\nupstream: b:2\ncollections:\n  a.b: { key: " + KEY + ", fields: \"*\" }\n")
                .contains("kmip"));
        assertTrue(error(KMIP + "collections:\n  a.b: { key: " + KEY + ", fields: [_id] }\n").contains("_id"));
        assertTrue(error(KMIP + "collections:\n  a.b: { key: not-a-uuid, fields: \"*\" }\n")
                .contains("collections.a.b.key must be a key UUID"));
        assertTrue(error(KMIP + "collections:\n  ab: { key: " + KEY + ", fields: \"*\" }\n")
                .contains("database.collection"));
        assertTrue(error(KMIP + "collections:\n  a.b: { key: " + KEY + ", fields: [x, x.y] }\n").contains("x.y"));
        assertTrue(error(KMIP + "collections:\n  a.b: { key: " + KEY + ", fields: \"*\", suite: ROT13 }\n")
                .contains("ROT13"));
    }

    @Test
    void aKeyNamedTwiceAnywhereIsAnErrorNamingFileLineAndKey() {
        // SnakeYAML would keep the second entry: the first one's fields would be stored in plaintext
        String collection = "  dup.people: { key: " + KEY + ", fields: [ssn] }\n";
        assertEquals("test.yaml: line 9: duplicate key 'dup.people' in the mapping that starts at line 8; YAML would "
                + "keep only the last value, so the file is refused (name each key once)",
                error(KMIP + "collections:\n" + collection + "  dup.people: { key: " + KEY + ", fields: [name] }\n"));
        String fields = error(KMIP + "collections:\n  hr.people:\n    key: " + KEY + "\n    fields:\n"
                + "      ssn: { deterministic: true }\n      name: {}\n      ssn: {}\n");
        assertTrue(fields.startsWith("test.yaml: line 13: duplicate key 'ssn' in the mapping that starts at line 11;"),
                fields);
        assertTrue(error(KMIP + "collections:\n  a.b: { key: " + KEY + ", fields: \"*\", key: " + KEY + " }\n")
                .startsWith("test.yaml: line 8: duplicate key 'key'"));
        assertTrue(error("listen: a:1\nupstream: b:2\nlisten: c:3\n").startsWith("test.yaml: line 3: duplicate key 'listen'"));
        assertTrue(error(KMIP + "kmip:\n  host: other\n").startsWith("test.yaml: line 7: duplicate key 'kmip'"));
        assertTrue(error("listen: a:1\nupstream: b:2\n'listen': c:3\n").contains("duplicate key 'listen'"),
                "quoting does not make it another key");
        String lineBreak = error(KMIP + "collections:\n  \"dup.people\\nx\": {}\n  \"dup.people\\nx\": {}\n");
        assertTrue(lineBreak.contains("duplicate key 'dup.people x'") && !lineBreak.contains("\n"), lineBreak);
        // a value merged in with "<<" may be overridden: that is what YAML merges are for, and explicit
        ProxyConfig merged = parse("<<: { listen: a:1, upstream: b:2 }\nlisten: c:3\n");
        assertEquals(new HostPort("c", 3), merged.listener().address());
    }

    @Test
    void refusesPolicyPathsWithAnAllDigitSegment() {
        // "scores.2024" reads like an array index to the rewriter, which then never matched it
        // exactly and stored the value in plaintext: such paths are configuration errors.
        for (String fields : new String[] {"[scores.2024]", "['2024.x']", "['2024']", "{ a.0.b: { deterministic: true } }"}) {
            String msg = error(KMIP + "collections:\n  a.b: { key: " + KEY + ", fields: " + fields + " }\n");
            assertTrue(msg.contains("collections.a.b.fields") && msg.contains("all-digit segment")
                    && msg.contains("array index"), msg);
        }
        assertTrue(policy(KMIP + "collections:\n  a.b: { key: " + KEY + ", fields: [scores.y2024, v2] }\n")
                .get("a.b").fields().containsKey("scores.y2024"));
    }
}
