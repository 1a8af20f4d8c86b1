package dev.fleproxy.metrics;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.ProxyServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Whether the proxy can take traffic: it is listening, the upstream accepts a TCP connection,
 * and every key of the policy is usable now (held within its TTL or inside the outage window:
 * current keys Active, previous keys at least Deactivated). Runs on the admin thread, never on an
 * event loop: it connects, resolves names and may wait for the KMS.
 */
final class Readiness {
    private final ProxyServer server;
    private final HostPort upstream;
    private final int connectTimeoutMs;
    private final Supplier<Policy> policy;
    private final KeyResolver resolver;
    private final Duration keyWait;

    Readiness(ProxyServer server, HostPort upstream, int connectTimeoutMs, Supplier<Policy> policy,
              KeyResolver resolver, Duration keyWait) {
        this.server = server;
        this.upstream = upstream;
        this.connectTimeoutMs = connectTimeoutMs;
        this.policy = policy;
        this.resolver = resolver;
        this.keyWait = keyWait;
    }

    /** What keeps the proxy from being ready (empty if it is ready). */
    List<String> problems() {
        List<String> problems = new ArrayList<>();
        if (!server.listening()) {
            problems.add("not listening");
        }
        String up = upstreamProblem();
        if (up != null) {
            problems.add(up);
        }
        Policy p = policy.get();
        if (resolver != null && !p.isEmpty()) {
            for (CollectionPolicy cp : p.collections().values()) {
                String why = resolver.unusable(cp.keyId(), true, keyWait);
                if (why != null) {
                    problems.add(cp.namespace() + ": " + why);
                }
                for (UUID previous : cp.previousKeys()) {
                    why = resolver.unusable(previous, false, keyWait);
                    if (why != null) {
                        problems.add(cp.namespace() + " (previous key): " + why);
                    }
                }
            }
        }
        return problems;
    }

    private String upstreamProblem() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(upstream.host(), upstream.port()), connectTimeoutMs);
            return null;
        } catch (IOException e) {
            return "upstream " + upstream + " is unreachable: " + e.getMessage();
        }
    }
}
