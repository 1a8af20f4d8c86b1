package dev.fleproxy.config;

import java.nio.file.Path;

/**
 * TLS on the client-facing listener ({@code tls:}): the proxy's certificate chain and key (PEM),
 * and, for client certificates, the CA that issues them and whether one is required.
 *
 * <pre>
 * tls:
 *   cert: proxy.pem          # the chain, leaf first (required)
 *   key: proxy.key           # PKCS#8 PEM (required)
 *   clientCA: ca.pem         # optional: CA of client certificates
 *   clientAuth: none         # none (default) | optional | required; optional and required need clientCA
 * </pre>
 */
public record ListenerTls(Path cert, Path key, Path clientCA, ClientAuth clientAuth) {
    public enum ClientAuth { NONE, OPTIONAL, REQUIRED }

    static ListenerTls parse(YamlMap m) {
        m.allowOnlySection("tls");
        Path clientCA = m.has("clientCA") ? m.path("clientCA") : null;
        String auth = m.string("clientAuth", ConfigSchema.TLS_CLIENT_AUTH.dflt());
        ClientAuth clientAuth = switch (auth) {
            case "none" -> ClientAuth.NONE;
            case "optional" -> ClientAuth.OPTIONAL;
            case "required" -> ClientAuth.REQUIRED;
            default -> throw new ConfigException(m.where("clientAuth") + " must be none, optional or required, not " + auth);
        };
        if (clientAuth != ClientAuth.NONE && clientCA == null) {
            throw new ConfigException(m.where("clientAuth") + " " + auth + " needs clientCA: (the CA of client certificates)");
        }
        return new ListenerTls(m.path("cert"), m.path("key"), clientCA, clientAuth);
    }
}
