package dev.fleproxy.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * The proxy's YAML configuration.
 *
 * <pre>
 * listen: 127.0.0.1:27018          # where clients connect (required)
 * upstream: 127.0.0.1:27017        # mongos, mongod or the embedded backend (required)
 * upstreamConnectTimeoutMs: 5000   # how long to wait for the upstream per client connection
 * </pre>
 *
 * Unknown keys are an error, so a typo never silently leaves a setting at its default.
 */
public record ProxyConfig(HostPort listen, HostPort upstream, int upstreamConnectTimeoutMs) {
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 5000;
    private static final Set<String> KNOWN_KEYS = Set.of("listen", "upstream", "upstreamConnectTimeoutMs");

    public static ProxyConfig load(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return parse(in, file.toString());
        } catch (IOException e) {
            throw new ConfigException("cannot read config " + file + ": " + e.getMessage(), e);
        }
    }

    static ProxyConfig parse(InputStream in, String source) {
        Object root;
        try {
            root = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
        } catch (YAMLException e) {
            throw new ConfigException(source + " is not valid YAML: " + e.getMessage(), e);
        }
        if (!(root instanceof Map<?, ?> map)) {
            throw new ConfigException(source + " must be a YAML mapping with listen: and upstream:");
        }
        Set<String> unknown = new TreeSet<>();
        for (Object key : map.keySet()) {
            if (!KNOWN_KEYS.contains(String.valueOf(key))) {
                unknown.add(String.valueOf(key));
            }
        }
        if (!unknown.isEmpty()) {
            throw new ConfigException(source + ": unknown key(s) " + unknown + "; known keys are "
                    + new TreeSet<>(KNOWN_KEYS));
        }
        HostPort listen = HostPort.parse(string(map.get("listen")), source + ": listen");
        HostPort upstream = HostPort.parse(string(map.get("upstream")), source + ": upstream");
        int timeout = DEFAULT_CONNECT_TIMEOUT_MS;
        Object t = map.get("upstreamConnectTimeoutMs");
        if (t != null) {
            if (!(t instanceof Integer i) || i <= 0) {
                throw new ConfigException(source + ": upstreamConnectTimeoutMs must be a positive integer");
            }
            timeout = i;
        }
        return new ProxyConfig(listen, upstream, timeout);
    }

    private static String string(Object o) {
        return o == null ? null : o.toString();
    }
}
