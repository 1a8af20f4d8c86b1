package dev.fleproxy.admin;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.ProxyServer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener ({@code admin:} in the config): {@code /metrics} (Prometheus text format),
 * {@code /healthz} (the event loops answer) and {@code /readyz} (listening, upstream reachable,
 * every policy key usable). Served by {@link AdminHttp}: an event loop and two threads of its
 * own, never the data port or its event loops; /healthz has one of the threads to itself, so
 * neither a probe that waits (for the KMS, for a connect) nor slow peers hold it up.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    /** How long an event loop has to run an empty task before /healthz fails. */
    static final long LOOP_TIMEOUT_MS = 2000;
    private static final String JSON = "application/json";
    private static final long READY_MAX_AGE_NANOS = 5_000_000_000L;

    private final AdminHttp http;
    private final PrometheusMeterRegistry registry;
    private final Liveness liveness;
    private final Readiness readiness;
    /**
     * The gauge fleproxy_ready: the last readiness answer, 1 ready or 0, checked afresh when a
     * scrape finds it older than {@link #READY_MAX_AGE_NANOS} (so it is right without any probe).
     */
    private final AtomicInteger ready = new AtomicInteger();
    private volatile long readyCheckedAt = System.nanoTime() - 2 * READY_MAX_AGE_NANOS;

    private AdminServer(HostPort address, PrometheusMeterRegistry registry, Liveness liveness, Readiness readiness)
            throws InterruptedException {
        this.registry = registry;
        this.liveness = liveness;
        this.readiness = readiness;
        http = AdminHttp.start(new InetSocketAddress(address.host(), address.port()), this::handle, Set.of("/healthz"));
        Gauge.builder("fleproxy.ready", this, AdminServer::readyNow)
                .description("1 if the proxy is ready (as /readyz answers), else 0").register(registry);
    }

    /**
     * Starts the listener at the config's {@code admin:} address; readiness probes its upstream and,
     * within its kmsWait, its keys. The registry must be the one the proxy's meters are in; resolver
     * may be null (no kmip: section).
     */
    public static AdminServer start(ProxyConfig config, PrometheusMeterRegistry registry, ProxyServer server,
                                    Supplier<Policy> policy, KeyResolver resolver) throws InterruptedException {
        HostPort address = config.admin();
        Duration kmsWait = config.kmip() != null ? config.kmip().cache().kmsWait() : Duration.ZERO;
        Readiness readiness = new Readiness(server, config.upstream().form(),
                Math.min(config.upstream().connectTimeoutMs(), 2000), policy, resolver, kmsWait);
        AdminServer a = new AdminServer(address, registry, new Liveness(server::eventLoops, LOOP_TIMEOUT_MS), readiness);
        log.info("admin listener on http://{}:{} (/metrics, /healthz, /readyz)", address.host(), a.address().getPort());
        if (!HostPort.isLoopback(address.host())) {
            log.warn("the admin listener on {} is reachable from other hosts, without TLS or authentication: it carries "
                    + "no field values, keys or client addresses, but names the encrypted collections and their traffic; "
                    + "keep it on a network you trust", address);
        }
        return a;
    }

    public InetSocketAddress address() {
        return http.address();
    }

    /** The answer to a GET of this path (on an admin thread: /healthz on its own, the rest on the other). */
    private AdminHttp.Response handle(String path) {
        return switch (path) {
            case "/metrics" -> new AdminHttp.Response(200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
            case "/healthz" -> {
                List<String> stuck = liveness.stuck();
                yield new AdminHttp.Response(stuck.isEmpty() ? 200 : 503, JSON, "{\"healthy\": " + stuck.isEmpty()
                        + ", \"problems\": " + jsonArray(stuck) + "}\n");
            }
            case "/readyz" -> {
                List<String> problems = checkReadiness();
                yield new AdminHttp.Response(problems.isEmpty() ? 200 : 503, JSON, "{\"ready\": " + problems.isEmpty()
                        + ", \"problems\": " + jsonArray(problems) + ", \"upstreams\": " + jsonArray(readiness.upstreams())
                        + "}\n");
            }
            default -> new AdminHttp.Response(404, "text/plain", "not found: try /metrics, /healthz or /readyz\n");
        };
    }

    /** Runs the readiness check and remembers its answer for the gauge. */
    private List<String> checkReadiness() {
        List<String> problems = readiness.problems();
        ready.set(problems.isEmpty() ? 1 : 0);
        readyCheckedAt = System.nanoTime();
        return problems;
    }

    /** The gauge's value: the last answer, or a fresh one if it is older than 5 s (scrapes run on /readyz's thread). */
    private double readyNow() {
        if (System.nanoTime() - readyCheckedAt > READY_MAX_AGE_NANOS) {
            checkReadiness();
        }
        return ready.get();
    }

    static String jsonArray(List<String> items) {
        StringBuilder b = new StringBuilder("[");
        for (String s : items) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append('"');
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            b.append('"');
        }
        return b.append(']').toString();
    }

    @Override
    public void close() {
        http.close();
    }
}
