package dev.fleproxy.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.DuplicateKeyException;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * The proxy's YAML configuration.
 *
 * <pre>
 * listen: 127.0.0.1:27018          # where clients connect (required)
 * upstream: 127.0.0.1:27017        # mongos, mongod or the embedded backend (required); several mongos
 *                                  # (a:27017,b:27017) or mongodb://a,b,c/?replicaSet=rs0: {@link UpstreamForm}
 * upstreamConnectTimeoutMs: 5000   # how long to wait for the upstream per client connection
 * transport: auto                  # sockets: auto (epoll where it loads, else nio), epoll, io_uring, nio
 * kmip: {…}                        # the KMS and key cache, see {@link KmipConfig}
 * tls: {…}                         # TLS for clients, see {@link ListenerTls}
 * allowPlaintextListen: false      # listen on a non-loopback address without tls: (refused unless true)
 * upstreamTls: {…}                 # TLS to the upstream, see {@link UpstreamTls}
 * clientReadTimeoutMs: 30000       # and maxIdleTimeMs, maxConnections, maxBufferedMessageBytes: {@link Limits}
 * envelopeSubtype: 6               # and collections: {…}, the encryption policy (policy.PolicyParser)
 * admin: 127.0.0.1:9464            # /metrics, /healthz, /readyz over HTTP (off unless set; never the data port)
 * instance: proxy-a                # this proxy's name in audit lines and metrics: {@link InstanceName}
 * </pre>
 *
 * Unknown keys are an error, so a typo never silently leaves a setting at its default.
 */
public record ProxyConfig(Listener listener, Upstream upstream, String transport, KmipConfig kmip,
                          PolicySection policySection, HostPort admin, AuditConfig audit, String instance) {
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = ConfigSchema.UPSTREAM_CONNECT_TIMEOUT_MS.intDefault();
    /** The names {@code transport:} accepts (server.Transport maps them). */
    public static final Set<String> TRANSPORTS = Set.of("auto", "nio", "epoll", "io_uring");

    /**
     * The client-facing side: {@code listen}, {@code tls} (null: none), {@code allowPlaintextListen}
     * and the limits on what clients can make the proxy hold.
     */
    public record Listener(HostPort address, ListenerTls tls, boolean allowPlaintext, Limits limits) {
    }

    /**
     * The server side: {@code upstream} ({@link UpstreamForm}: one server, several mongos or a
     * replica set), {@code upstreamConnectTimeoutMs} and {@code upstreamTls} (null: none).
     */
    public record Upstream(UpstreamForm form, int connectTimeoutMs, UpstreamTls tls) {
        public Upstream(HostPort address, int connectTimeoutMs, UpstreamTls tls) {
            this(UpstreamForm.single(address), connectTimeoutMs, tls);
        }

        /** The first address named (the only one in the single-server form). */
        public HostPort address() {
            return form.addresses().get(0);
        }
    }

    public ProxyConfig(Listener listener, Upstream upstream, String transport, KmipConfig kmip,
                       PolicySection policySection, HostPort admin) {
        this(listener, upstream, transport, kmip, policySection, admin, null, null);
    }

    /** The configured {@code instance:}, else the name derived from the host and the listen port. */
    public String instanceName() {
        return instance != null ? instance : InstanceName.derive(listener.address());
    }

    public ProxyConfig(HostPort listen, HostPort upstream, int upstreamConnectTimeoutMs) {
        this(listen, upstream, upstreamConnectTimeoutMs, "auto", null, PolicySection.NONE);
    }

    public ProxyConfig(HostPort listen, HostPort upstream, int upstreamConnectTimeoutMs, String transport,
                       KmipConfig kmip, PolicySection policySection) {
        this(new Listener(listen, null, false, Limits.DEFAULT), new Upstream(upstream, upstreamConnectTimeoutMs, null),
                transport, kmip, policySection, null);
    }

    /** The same settings on another transport (benchmarks and tests compare them). */
    public ProxyConfig withTransport(String name) {
        return new ProxyConfig(listener, upstream, name, kmip, policySection, admin, audit, instance);
    }

    /** The same settings with other limits (tests). */
    public ProxyConfig withLimits(Limits l) {
        return new ProxyConfig(new Listener(listener.address(), listener.tls(), listener.allowPlaintext(), l), upstream,
                transport, kmip, policySection, admin, audit, instance);
    }

    /** The same settings with TLS on either side (tests). */
    public ProxyConfig withTls(ListenerTls listenerTls, UpstreamTls upstreamTls) {
        return new ProxyConfig(new Listener(listener.address(), listenerTls, listener.allowPlaintext(), listener.limits()),
                new Upstream(upstream.form(), upstream.connectTimeoutMs(), upstreamTls), transport, kmip, policySection,
                admin, audit, instance);
    }

    /** The same settings with the admin listener at this address (tests). */
    public ProxyConfig withAdmin(HostPort a) {
        return new ProxyConfig(listener, upstream, transport, kmip, policySection, a, audit, instance);
    }

    public static ProxyConfig load(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return parse(in, file.toString(), file.toAbsolutePath().getParent());
        } catch (IOException e) {
            throw new ConfigException("cannot read config " + file + ": " + e.getMessage(), e);
        }
    }

    static ProxyConfig parse(InputStream in, String source) {
        return parse(in, source, null);
    }

    static ProxyConfig parse(InputStream in, String source, Path baseDir) {
        Object root;
        LoaderOptions options = new LoaderOptions();
        // By default SnakeYAML keeps the last of two equal keys without a word: a second
        // "hr.people:" or a second "ssn:" under fields: would drop what the first one said, and
        // leave those fields in plaintext. A key named twice anywhere makes the file invalid.
        options.setAllowDuplicateKeys(false);
        try {
            root = new Yaml(new SafeConstructor(options)).load(in);
        } catch (DuplicateKeyException e) {
            throw new ConfigException(duplicateKey(source, e), e);
        } catch (YAMLException e) {
            throw new ConfigException(source + " is not valid YAML: " + e.getMessage(), e);
        }
        if (!(root instanceof Map<?, ?>)) {
            throw new ConfigException(source + " must be a YAML mapping with listen: and upstream:");
        }
        YamlMap m = new YamlMap(root, source, "", baseDir);
        m.allowOnlySection("");
        HostPort listen = HostPort.parse(str(m.raw("listen")), source + ": listen");
        UpstreamForm upstream = UpstreamForm.parse(m.raw("upstream"), source + ": upstream");
        Object t = m.raw("upstreamConnectTimeoutMs");
        int timeout = DEFAULT_CONNECT_TIMEOUT_MS;
        if (t != null) {
            if (!(t instanceof Integer i) || i <= 0) {
                throw new ConfigException(source + ": upstreamConnectTimeoutMs must be a positive integer");
            }
            timeout = i;
        }
        String transport = m.string("transport", ConfigSchema.TRANSPORT.dflt());
        if (!TRANSPORTS.contains(transport)) {
            throw new ConfigException(m.where("transport") + " must be one of auto, epoll, io_uring, nio, not " + transport);
        }
        KmipConfig kmip = m.has("kmip") ? KmipConfig.parse(m.child("kmip")) : null;
        PolicySection policy = new PolicySection(m.raw("collections"), m.raw("envelopeSubtype"), m.raw("identities"), source);
        if (policy.present() && kmip == null) {
            throw new ConfigException(source + ": collections: needs a kmip: section (the keys come from the KMS)");
        }
        ListenerTls tls = m.has("tls") ? ListenerTls.parse(m.child("tls")) : null;
        Object plain = m.raw("allowPlaintextListen");
        if (plain != null && !(plain instanceof Boolean)) {
            throw new ConfigException(m.where("allowPlaintextListen") + " must be true or false");
        }
        UpstreamTls upstreamTls = m.has("upstreamTls") ? UpstreamTls.parse(m.child("upstreamTls")) : null;
        HostPort admin = m.has("admin") ? HostPort.parse(str(m.raw("admin")), source + ": admin") : null;
        if (admin != null && admin.port() != 0 && admin.port() == listen.port()) {
            throw new ConfigException(source + ": admin: " + admin + " uses the data port of listen: " + listen
                    + "; give the admin listener a port of its own (e.g. 9464)");
        }
        AuditConfig audit = m.has("audit") ? AuditConfig.parse(m.child("audit")) : null;
        if (audit != null && kmip == null) {
            throw new ConfigException(source + ": audit: needs a kmip: section (its key comes from the KMS)");
        }
        String instance = m.has("instance") ? InstanceName.check(m.raw("instance"), m.where("instance")) : null;
        return new ProxyConfig(new Listener(listen, tls, Boolean.TRUE.equals(plain), Limits.parse(m)),
                new Upstream(upstream, timeout, upstreamTls), transport, kmip, policy, admin, audit, instance);
    }

    /** One line: the file, the line of the second occurrence, the key, and where its mapping starts. */
    private static String duplicateKey(String source, DuplicateKeyException e) {
        String problem = e.getProblem();
        String prefix = "found duplicate key ";
        String key = problem != null && problem.startsWith(prefix) ? problem.substring(prefix.length()) : problem;
        key = String.valueOf(key).replaceAll("[\\r\\n]+", " "); // a quoted key may hold line breaks: still one line
        String mapping = e.getContextMark() == null ? "" : " in the mapping that starts at line "
                + (e.getContextMark().getLine() + 1);
        return source + ": line " + (e.getProblemMark().getLine() + 1) + ": duplicate key '" + key + "'" + mapping
                + "; YAML would keep only the last value, so the file is refused (name each key once)";
    }

    /**
     * Why the proxy must not start as configured, or null: a listener off loopback carries
     * decrypted values and credentials, so it needs tls: unless allowPlaintextListen says so.
     */
    public String plaintextListenProblem() {
        if (listener.tls() != null || listener.allowPlaintext() || HostPort.isLoopback(listener.address().host())) {
            return null;
        }
        return "listen: " + listener.address() + " is not a loopback address and there is no tls: section; clients would send "
                + "credentials and receive decrypted values in clear. Add tls: (cert, key) or, on a network you trust, "
                + "allowPlaintextListen: true";
    }

    private static String str(Object o) {
        return o == null ? null : o.toString();
    }
}
