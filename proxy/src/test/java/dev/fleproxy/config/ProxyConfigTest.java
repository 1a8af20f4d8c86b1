package dev.fleproxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProxyConfigTest {

    private static ProxyConfig parse(String yaml) {
        return ProxyConfig.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "test.yaml");
    }

    private static String error(String yaml) {
        return assertThrows(ConfigException.class, () -> parse(yaml)).getMessage();
    }

    @Test
    void readsListenUpstreamAndTimeout() {
        ProxyConfig c = parse("listen: 0.0.0.0:27018\nupstream: mongos.internal:27017\nupstreamConnectTimeoutMs: 1500\n");
        assertEquals(new HostPort("0.0.0.0", 27018), c.listen());
        assertEquals(new HostPort("mongos.internal", 27017), c.upstream());
        assertEquals(1500, c.upstreamConnectTimeoutMs());
        assertEquals(ProxyConfig.DEFAULT_CONNECT_TIMEOUT_MS,
                parse("listen: 127.0.0.1:1\nupstream: '[::1]:2'\n").upstreamConnectTimeoutMs());
        assertEquals(new HostPort("::1", 2), parse("listen: 127.0.0.1:1\nupstream: '[::1]:2'\n").upstream());
    }

    @Test
    void readsTheKmipSectionWithPathsRelativeToTheFile() {
        ProxyConfig c = ProxyConfig.parse(new ByteArrayInputStream(("listen: a:1\nupstream: b:2\nkmip:\n"
                + "  host: kms\n  ca: certs/ca.pem\n  clientCert: certs/proxy.pem\n  clientKey: /abs/proxy.key\n"
                + "  cacheTtlSeconds: 60\n").getBytes(StandardCharsets.UTF_8)), "p.yaml", java.nio.file.Path.of("/etc/fle"));
        KmipConfig k = c.kmip();
        assertEquals("kms", k.host());
        assertEquals(5696, k.port());
        assertEquals(java.nio.file.Path.of("/etc/fle/certs/ca.pem"), k.ca());
        assertEquals(java.nio.file.Path.of("/abs/proxy.key"), k.clientKey());
        assertEquals(60, k.cacheTtl().toSeconds());
        assertEquals(900, k.outageWindow().toSeconds());
        assertTrue(!k.toString().contains("Password"));
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
}
