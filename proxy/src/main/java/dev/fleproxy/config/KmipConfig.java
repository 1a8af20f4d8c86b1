package dev.fleproxy.config;

import dev.fleproxy.kmip.KmipTls;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The proxy's KMS connection and key cache (config section {@code kmip:}).
 *
 * <pre>
 * kmip:
 *   host: 127.0.0.1
 *   port: 5696
 *   # serverName: kms.internal     # optional: the name the KMS's certificate must carry instead of
 *                                  # host (a DNS SAN, also sent as SNI; or an IP SAN for an address)
 *   ca: kms/ca.pem                 # the CA that signed the KMS's certificate
 *   clientCert: kms/proxy.pem      # the proxy's certificate (extendedKeyUsage clientAuth) …
 *   clientKey: kms/proxy.key       # … and its unencrypted PKCS#8 key; or instead:
 *   # clientPkcs12: kms/proxy.p12, clientPkcs12Password: "…"
 *   cacheTtlSeconds: 300           # how long a fetched key is served before it is fetched again
 *   outageWindowSeconds: 900       # how long past its TTL a cached key serves while the KMS is down
 *   negativeCacheSeconds: 10       # how long an unknown key, or a failed fetch, is remembered
 *   kmsWaitMs: 5000                # how long a request waits for a key not in the cache
 *   connections: 4                 # KMIP connections (and fetches) at most at once
 *   connectTimeoutMs: 3000
 *   readTimeoutMs: 10000
 * </pre>
 *
 * Relative paths are relative to the config file's directory. The KMS's certificate is always
 * checked against {@code host} (an IP address SAN for an IP address, a DNS SAN for a name), or
 * against {@code serverName} when it is given.
 */
public record KmipConfig(Server server, Identity identity, Cache cache, Pool pool) {
    public static final Duration DEFAULT_NEGATIVE_CACHE = Duration.ofSeconds(ConfigSchema.KMIP_NEGATIVE_CACHE_SECONDS.intDefault());
    public static final int DEFAULT_KMS_WAIT_MS = ConfigSchema.KMIP_KMS_WAIT_MS.intDefault();
    public static final int DEFAULT_CONNECTIONS = ConfigSchema.KMIP_CONNECTIONS.intDefault();

    /** Where the KMS listens, and the name its certificate must carry ({@code serverName}; null: {@code host}). */
    public record Server(String host, int port, String serverName) {
    }

    /** The CA the KMS's certificate must chain to, and the proxy's own: a PEM certificate and key, or a PKCS#12 file. */
    public record Identity(Path ca, Path clientCert, Path clientKey, Path clientPkcs12, String clientPkcs12Password) {
        public static Identity pem(Path ca, Path cert, Path key) {
            return new Identity(ca, cert, key, null, "");
        }

        public static Identity pkcs12(Path ca, Path p12, String password) {
            return new Identity(ca, null, null, p12, password);
        }
    }

    /**
     * How long keys are held and waited for: served for {@code ttl}, then past it for {@code
     * outageWindow} while the KMS is down; an unknown key remembered for {@code negativeCache}; a
     * request waits {@code kmsWait} (kmsWaitMs) for a key not in memory, then is refused (9720020).
     */
    public record Cache(Duration ttl, Duration outageWindow, Duration negativeCache, Duration kmsWait) {
        /** These two, the rest at their defaults. */
        public static Cache of(Duration ttl, Duration outageWindow) {
            return new Cache(ttl, outageWindow, DEFAULT_NEGATIVE_CACHE, Duration.ofMillis(DEFAULT_KMS_WAIT_MS));
        }
    }

    /** KMIP connections at most at once, and their timeouts. */
    public record Pool(int connections, int connectTimeoutMs, int readTimeoutMs) {
        public static Pool of(int connectTimeoutMs, int readTimeoutMs) {
            return new Pool(DEFAULT_CONNECTIONS, connectTimeoutMs, readTimeoutMs);
        }
    }

    static KmipConfig parse(YamlMap m) {
        m.allowOnlySection("kmip");
        boolean pem = m.has("clientCert") || m.has("clientKey");
        boolean p12 = m.has("clientPkcs12");
        if (pem == p12) {
            throw new ConfigException(m.where("clientCert") + " and clientKey, or clientPkcs12: give exactly one "
                    + "client identity (a PEM certificate and key, or a PKCS#12 file)");
        }
        String host = m.string("host");
        int port = m.integer(ConfigSchema.KMIP_PORT);
        Identity identity = pem ? Identity.pem(m.path("ca"), m.path("clientCert"), m.path("clientKey"))
                : Identity.pkcs12(m.path("ca"), m.path("clientPkcs12"), m.string("clientPkcs12Password", ""));
        Cache cache = new Cache(Duration.ofSeconds(m.integer(ConfigSchema.KMIP_CACHE_TTL_SECONDS)),
                Duration.ofSeconds(m.integer(ConfigSchema.KMIP_OUTAGE_WINDOW_SECONDS)),
                Duration.ofSeconds(m.integer(ConfigSchema.KMIP_NEGATIVE_CACHE_SECONDS)),
                Duration.ofMillis(m.integer(ConfigSchema.KMIP_KMS_WAIT_MS)));
        Pool pool = new Pool(m.integer(ConfigSchema.KMIP_CONNECTIONS), m.integer(ConfigSchema.KMIP_CONNECT_TIMEOUT_MS),
                m.integer(ConfigSchema.KMIP_READ_TIMEOUT_MS));
        return new KmipConfig(new Server(host, port, serverName(m)), identity, cache, pool); // checked in file order
    }

    private static String serverName(YamlMap m) {
        if (!m.has("serverName")) {
            return null;
        }
        String name = m.string("serverName").trim();
        if (!KmipTls.isIpLiteral(name) && !KmipTls.isDnsName(name)) {
            throw new ConfigException(m.where("serverName") + " must be a DNS name or an IP address (the name the KMS's "
                    + "certificate carries), not '" + m.string("serverName") + "'");
        }
        return name.startsWith("[") ? name.substring(1, name.length() - 1) : name;
    }

    @Override
    public String toString() {
        return "KmipConfig(" + server.host() + ":" + server.port()
                + (server.serverName() == null ? "" : ", server name " + server.serverName()) + ", ca " + identity.ca()
                + ", cache TTL " + cache.ttl().toSeconds() + " s, outage window " + cache.outageWindow().toSeconds()
                + " s, negative cache " + cache.negativeCache().toSeconds() + " s, waits " + cache.kmsWait().toMillis()
                + " ms, " + pool.connections() + " connection(s))";
    }
}
