package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ProxyConfig;
import java.nio.file.Path;

/**
 * A configuration file read once: its settings and the policy its {@code policy:} section states. The one
 * way to read both, for the reloads and for the commands that check or act on a file.
 */
public record ConfigFile(ProxyConfig config, Policy policy) {

    /** Reads and validates the file; a {@link ConfigException} names what is wrong and where. */
    public static ConfigFile load(Path file) {
        ProxyConfig config = ProxyConfig.load(file);
        return new ConfigFile(config, PolicyParser.parse(config.policySection()));
    }
}
