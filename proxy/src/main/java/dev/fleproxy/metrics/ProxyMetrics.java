package dev.fleproxy.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The meters the data path moves: connections, requests by command and outcome, bytes, and the
 * three latency histograms (what the client sees, the upstream's part, the proxy's own part).
 * {@link #DISABLED} (no admin listener) does nothing, and callers skip their clock reads when
 * {@link #enabled} is false. Labels come from fixed lists or the policy's namespaces only.
 */
public final class ProxyMetrics {
    public static final ProxyMetrics DISABLED = new ProxyMetrics(null);

    /** The label for requests to collections outside the policy. */
    public static final String OTHER_COLLECTION = "other";

    /**
     * Bucket bounds: fine below a millisecond, where the proxy's own part lies, then coarse up to
     * the slowest upstream answers.
     */
    private static final Duration[] LATENCY_BUCKETS = micros(1, 2, 5, 10, 25, 50, 75, 100, 150, 200, 300, 500, 750, 1_000,
            1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
            2_500_000, 5_000_000, 10_000_000);

    public enum Outcome {
        /** Passed on unchanged. */
        FORWARDED,
        /** Passed on after rewriting (encrypted values, rewritten filters). */
        REWRITTEN,
        /** Answered by the proxy with an error reply, not forwarded. */
        REFUSED,
        /** Not forwarded and not answerable (legacy write opcodes, unacknowledged writes): the connection closed. */
        CLOSED;

        final String label = name().toLowerCase(Locale.ROOT);
    }

    private final MeterRegistry registry;
    private final Map<String, Counter> requests = new ConcurrentHashMap<>();
    private final Map<String, Counter> refusals = new ConcurrentHashMap<>();
    private final Map<String, Counter> closes = new ConcurrentHashMap<>();
    private final Map<String, Timer[]> latencies = new ConcurrentHashMap<>();
    private final Map<String, Counter> replyErrors = new ConcurrentHashMap<>();
    private final Counter accepted;
    private final Counter clientReceived;
    private final Counter clientSent;
    private final Counter upstreamReceived;
    private final Counter upstreamSent;

    public ProxyMetrics(MeterRegistry registry) {
        this.registry = registry;
        if (registry == null) {
            accepted = clientReceived = clientSent = upstreamReceived = upstreamSent = null;
            return;
        }
        accepted = Counter.builder("fleproxy.connections.accepted").description("client connections accepted")
                .register(registry);
        clientReceived = bytes("client", "received");
        clientSent = bytes("client", "sent");
        upstreamReceived = bytes("upstream", "received");
        upstreamSent = bytes("upstream", "sent");
    }

    private Counter bytes(String side, String direction) {
        return Counter.builder("fleproxy.bytes").description("wire message bytes, by side (client or upstream) and "
                + "direction (received or sent by the proxy)").tag("side", side).tag("direction", direction)
                .register(registry);
    }

    public boolean enabled() {
        return registry != null;
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void accepted() {
        if (registry != null) {
            accepted.increment();
        }
    }

    /** A client connection closed; reason is a label from a fixed list (see README). */
    public void closed(String reason) {
        if (registry != null) {
            closes.computeIfAbsent(reason, r -> Counter.builder("fleproxy.connections.closed")
                    .description("client connections closed, by reason").tag("reason", r).register(registry))
                    .increment();
        }
    }

    /** A connection refused at accept because a limit (maxConnections) was reached. */
    public void refusedConnection(String limit) {
        if (registry != null) {
            Counter.builder("fleproxy.connections.refused").description("client connections refused by a limit")
                    .tag("limit", limit).register(registry).increment();
        }
    }

    public void request(String command, Outcome outcome) {
        if (registry == null) {
            return;
        }
        String label = CommandLabels.of(command);
        requests.computeIfAbsent(label + ' ' + outcome.label, k -> Counter.builder("fleproxy.requests")
                .description("client requests, by command and outcome").tag("command", label)
                .tag("outcome", outcome.label).register(registry)).increment();
    }

    /** A request the proxy answered with an error reply instead of forwarding it. */
    public void refused(String command, int code) {
        if (registry == null) {
            return;
        }
        request(command, Outcome.REFUSED);
        String label = CommandLabels.of(command);
        String c = Integer.toString(code);
        refusals.computeIfAbsent(label + ' ' + c, k -> Counter.builder("fleproxy.requests.refused")
                .description("requests refused by the proxy, by command and error code").tag("command", label)
                .tag("code", c).register(registry)).increment();
    }

    /** A reply the proxy replaced with an error (a value it could not decrypt, a key it could not get). */
    public void replyError(int code) {
        if (registry != null) {
            String c = Integer.toString(code);
            replyErrors.computeIfAbsent(c, k -> Counter.builder("fleproxy.reply.errors")
                    .description("upstream replies the proxy replaced with an error, by code").tag("code", c)
                    .register(registry)).increment();
        }
    }

    public void clientBytes(boolean received, int n) {
        if (registry != null) {
            (received ? clientReceived : clientSent).increment(n);
        }
    }

    public void upstreamBytes(boolean received, int n) {
        if (registry != null) {
            (received ? upstreamReceived : upstreamSent).increment(n);
        }
    }

    /**
     * One request's times, from when the proxy had read it to when it had written the reply:
     * total, the upstream's part (forwarded → reply read) and the rest, which is the proxy's own.
     */
    public void latency(String collection, long totalNanos, long upstreamNanos) {
        if (registry == null) {
            return;
        }
        Timer[] t = latencies.computeIfAbsent(collection, this::latencyTimers);
        t[0].record(totalNanos, TimeUnit.NANOSECONDS);
        t[1].record(upstreamNanos, TimeUnit.NANOSECONDS);
        t[2].record(totalNanos - upstreamNanos, TimeUnit.NANOSECONDS);
    }

    private Timer[] latencyTimers(String collection) {
        return new Timer[] {
            histogram("fleproxy.request.duration", "time from reading a request to writing its reply, as the client "
                    + "sees it (less the network)", collection),
            histogram("fleproxy.upstream.duration", "time from forwarding a request to reading the upstream's reply",
                    collection),
            histogram("fleproxy.proxy.duration", "what the proxy adds to a request: reading it to forwarding it, "
                    + "plus reading the reply to writing it (rewriting, crypto, waits for keys)", collection)};
    }

    private Timer histogram(String name, String description, String collection) {
        return Timer.builder(name).description(description).tag("collection", collection)
                .serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
    }

    /** A histogram with this module's latency buckets (the KMS's requests use it too). */
    Timer latencyTimer(String name, String description, String tagKey, String tagValue) {
        return Timer.builder(name).description(description).tag(tagKey, tagValue)
                .serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
    }

    private static Duration[] micros(long... us) {
        Duration[] d = new Duration[us.length];
        for (int i = 0; i < us.length; i++) {
            d[i] = Duration.ofNanos(us[i] * 1000);
        }
        return d;
    }
}
