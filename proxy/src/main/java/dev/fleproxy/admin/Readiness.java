package dev.fleproxy.admin;

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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Whether the proxy can take traffic: it is listening, the upstream accepts a TCP connection,
 * and every key of the policy is usable now (held within its TTL or inside the outage window:
 * current keys Active, previous keys at least Deactivated). Runs on the admin thread, never on an
 * event loop: it connects, resolves names and may wait for the KMS.
 */
final class Readiness {
    /** A probe must answer in time for the orchestrator's own timeout (commonly 1-5 s). */
    private static final Duration MAX_KMS_WAIT = Duration.ofSeconds(2);

    private final ProxyServer server;
    private final dev.fleproxy.config.UpstreamForm upstream;
    /** Each upstream address and how it was at the last check (the /readyz body's "upstreams"). */
    private volatile List<String> upstreams = List.of();
    private final int connectTimeoutMs;
    private final Supplier<Policy> policy;
    private final KeyResolver resolver;
    /** How long a probe waits for the KMS: no longer than a request would (kmsWait), and at most 2 s. */
    private final Duration kmsWait;

    Readiness(ProxyServer server, dev.fleproxy.config.UpstreamForm upstream, int connectTimeoutMs, Supplier<Policy> policy,
              KeyResolver resolver, Duration kmsWait) {
        this.server = server;
        this.upstream = upstream;
        this.connectTimeoutMs = connectTimeoutMs;
        this.policy = policy;
        this.resolver = resolver;
        this.kmsWait = kmsWait.compareTo(MAX_KMS_WAIT) < 0 ? kmsWait : MAX_KMS_WAIT;
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
            problems.addAll(keyProblems(p));
        }
        return problems;
    }

    /**
     * Each policy key's problem, if it has one. Keys a fetch could make usable (not held, expired)
     * are fetched all at once, with one wait for them all, before they are judged.
     */
    private List<String> keyProblems(Policy p) {
        Map<UUID, Boolean> uses = new LinkedHashMap<>(); // key → whether it must encrypt (else only decrypt)
        Map<UUID, String> where = new LinkedHashMap<>();
        for (CollectionPolicy cp : p.collections().values()) {
            uses.put(cp.keyId(), true);
            where.merge(cp.keyId(), cp.namespace(), (a, b) -> a + ", " + b);
            for (UUID previous : cp.previousKeys()) {
                uses.putIfAbsent(previous, false);
                where.merge(previous, cp.namespace() + " (previous key)", (a, b) -> a + ", " + b);
            }
        }
        List<UUID> fetch = new ArrayList<>();
        uses.forEach((id, encrypt) -> {
            if (resolver.usability(id, encrypt).fetchMayHelp()) {
                fetch.add(id);
            }
        });
        String waited = null;
        if (!fetch.isEmpty()) {
            try {
                resolver.fetch(fetch).get(kmsWait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                waited = " (" + resolver.describeSource() + " did not answer within " + kmsWait.toMillis() + " ms)";
            } catch (ExecutionException | InterruptedException e) {
                waited = " (" + e + ")";
            }
        }
        List<String> problems = new ArrayList<>();
        for (Map.Entry<UUID, Boolean> u : uses.entrySet()) {
            String why = resolver.usability(u.getKey(), u.getValue()).problem();
            if (why != null) {
                problems.add(where.get(u.getKey()) + ": " + why + (waited != null && fetch.contains(u.getKey())
                        ? waited : ""));
            }
        }
        return problems;
    }

    /** Each upstream address and how it was at the last check. */
    List<String> upstreams() {
        return upstreams;
    }

    /**
     * One server or several mongos: each is probed (a TCP connection), and the proxy is ready if
     * one answers. A replica set: ready while its monitor knows a primary; each member's role.
     */
    private String upstreamProblem() {
        if (upstream.isReplicaSet()) {
            upstreams = server.upstreams();
            return server.upstreamChosen() ? null : "replica set " + upstream.replicaSet() + " has no primary: "
                    + String.join(", ", upstreams);
        }
        List<String> status = new ArrayList<>();
        List<String> down = new ArrayList<>();
        for (HostPort a : upstream.addresses()) {
            String problem = probe(a);
            status.add(a + (problem == null ? ": reachable" : ": " + problem));
            if (problem != null) {
                down.add("upstream " + a + " is " + problem);
            }
        }
        upstreams = List.copyOf(status);
        return down.size() < upstream.addresses().size() ? null : String.join("; ", down);
    }

    private String probe(HostPort a) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(a.host(), a.port()), connectTimeoutMs);
            return null;
        } catch (IOException e) {
            return "unreachable: " + e.getMessage();
        }
    }
}
