package dev.fleproxy.config;

import java.nio.file.Path;

/**
 * TLS to the upstream ({@code upstreamTls:}): the CA that issues its certificate, optionally the
 * proxy's own certificate and key (x.509 authentication to mongos), and the name the upstream's
 * certificate must carry (by default the upstream's host; host-name verification is always on).
 *
 * <pre>
 * upstreamTls:
 *   ca: ca.pem                 # required
 *   cert: proxy-client.pem     # optional, with key: a client certificate
 *   key: proxy-client.key
 *   serverName: mongos.internal  # optional: the name to verify instead of upstream's host
 * </pre>
 */
public record UpstreamTls(Path ca, Path cert, Path key, String serverName) {
    static UpstreamTls parse(YamlMap m) {
        m.allowOnlySection("upstreamTls");
        if (m.has("cert") != m.has("key")) {
            throw new ConfigException(m.where(m.has("cert") ? "key" : "cert") + " is missing: a client certificate needs "
                    + "both cert: and key:");
        }
        return new UpstreamTls(m.path("ca"), m.has("cert") ? m.path("cert") : null, m.has("key") ? m.path("key") : null,
                m.string("serverName", null));
    }
}
