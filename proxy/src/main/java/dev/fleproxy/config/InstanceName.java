package dev.fleproxy.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * A proxy instance's name (docs/operations.md, "Running several proxies"): in every audit line, so
 * that each instance's trail is a chain of its own, and in the metric {@code fleproxy_instance_info}.
 * Configured ({@code instance:}), or derived from the host's name and the listen port, which stay
 * the same across restarts on one host (a Kubernetes pod's host name is its pod name).
 */
public final class InstanceName {
    /** Letters, digits, '.', '_' and '-': nothing a JSON string, a label value or a file name must escape. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private InstanceName() {
    }

    /** The configured name, or a ConfigException saying what a name may hold. */
    static String check(Object value, String where) {
        String s = value == null ? null : value.toString();
        if (s == null || !NAME.matcher(s).matches()) {
            throw new ConfigException(where + " must be 1-64 letters, digits, '.', '_' or '-', not " + s);
        }
        return s;
    }

    /** HOST-PORT: the host's name (HOSTNAME, else the kernel's), cut to what a name may hold. */
    static String derive(HostPort listen) {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.US_ASCII).trim();
            } catch (IOException | RuntimeException e) {
                host = "proxy"; // no name to be had: the port still tells instances on one host apart
            }
        }
        String clean = host.replaceAll("[^A-Za-z0-9._-]", "-");
        String suffix = "-" + listen.port();
        return (clean.isEmpty() ? "proxy" : clean.substring(0, Math.min(clean.length(), 64 - suffix.length()))) + suffix;
    }
}
