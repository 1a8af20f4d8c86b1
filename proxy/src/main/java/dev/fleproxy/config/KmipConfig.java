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
public record KmipConfig(String host, int port, Path ca, Path clientCert, Path clientKey, Path clientPkcs12,
                         String clientPkcs12Password, Duration cacheTtl, Duration outageWindow,
                         Duration negativeCache, int kmsWaitMs, int connections,
                         int connectTimeoutMs, int readTimeoutMs, String serverName) {
    public static final Duration DEFAULT_NEGATIVE_CACHE = Duration.ofSeconds(ConfigSchema.KMIP_NEGATIVE_CACHE_SECONDS.intDefault());
    public static final int DEFAULT_KMS_WAIT_MS = ConfigSchema.KMIP_KMS_WAIT_MS.intDefault();
    public static final int DEFAULT_CONNECTIONS = ConfigSchema.KMIP_CONNECTIONS.intDefault();

    /** Without {@code serverName}: the KMS's certificate must name {@code host}. */
    public KmipConfig(String host, int port, Path ca, Path clientCert, Path clientKey, Path clientPkcs12,
                      String clientPkcs12Password, Duration cacheTtl, Duration outageWindow,
                      Duration negativeCache, int kmsWaitMs, int connections,
                      int connectTimeoutMs, int readTimeoutMs) {
        this(host, port, ca, clientCert, clientKey, clientPkcs12, clientPkcs12Password, cacheTtl, outageWindow,
                negativeCache, kmsWaitMs, connections, connectTimeoutMs, readTimeoutMs, null);
    }

    /** The settings of a test or tool that does not care about the cache details. */
    public static KmipConfig of(String host, int port, Path ca, Path clientCert, Path clientKey, Path clientPkcs12,
                                String clientPkcs12Password, Duration cacheTtl, Duration outageWindow,
                                int connectTimeoutMs, int readTimeoutMs) {
        return new KmipConfig(host, port, ca, clientCert, clientKey, clientPkcs12, clientPkcs12Password, cacheTtl,
                outageWindow, DEFAULT_NEGATIVE_CACHE, DEFAULT_KMS_WAIT_MS, DEFAULT_CONNECTIONS, connectTimeoutMs,
                readTimeoutMs);
    }

    static KmipConfig parse(YamlMap m) {
        m.allowOnlySection("kmip");
        boolean pem = m.has("clientCert") || m.has("clientKey");
        boolean p12 = m.has("clientPkcs12");
        if (pem == p12) {
            throw new ConfigException(m.where("clientCert") + " and clientKey, or clientPkcs12: give exactly one "
                    + "client identity (a PEM certificate and key, or a PKCS#12 file)");
        }
        return new KmipConfig(
                m.string("host"),
                m.integer(ConfigSchema.KMIP_PORT),
                m.path("ca"),
                pem ? m.path("clientCert") : null,
                pem ? m.path("clientKey") : null,
                p12 ? m.path("clientPkcs12") : null,
                m.string("clientPkcs12Password", ""),
                Duration.ofSeconds(m.integer(ConfigSchema.KMIP_CACHE_TTL_SECONDS)),
                Duration.ofSeconds(m.integer(ConfigSchema.KMIP_OUTAGE_WINDOW_SECONDS)),
                Duration.ofSeconds(m.integer(ConfigSchema.KMIP_NEGATIVE_CACHE_SECONDS)),
                m.integer(ConfigSchema.KMIP_KMS_WAIT_MS),
                m.integer(ConfigSchema.KMIP_CONNECTIONS),
                m.integer(ConfigSchema.KMIP_CONNECT_TIMEOUT_MS),
                m.integer(ConfigSchema.KMIP_READ_TIMEOUT_MS),
                serverName(m));
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

    /** How long a request waits for a key not in memory (kmsWaitMs), before it is refused with 9720020. */
    public Duration kmsWait() {
        return Duration.ofMillis(kmsWaitMs);
    }

    @Override
    public String toString() {
        return "KmipConfig(" + host + ":" + port + (serverName == null ? "" : ", server name " + serverName)
                + ", ca " + ca + ", cache TTL " + cacheTtl.toSeconds() + " s, outage window "
                + outageWindow.toSeconds() + " s, negative cache " + negativeCache.toSeconds() + " s, waits " + kmsWaitMs
                + " ms, " + connections + " connection(s))";
    }
}
