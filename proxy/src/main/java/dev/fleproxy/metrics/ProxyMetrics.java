package dev.fleproxy.metrics;

import dev.fleproxy.keys.KeyResolver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The meters the data path moves: connections, requests by command and outcome, bytes, and the
 * three latency histograms (what the client sees, the upstream's part, the proxy's own part).
 * What every request moves is counted by the calling thread in its own {@link LoopMeters} and
 * summed at scrape time ({@link DataPathCollector}); what happens rarely (connections, refusals,
 * replaced replies) goes to Micrometer counters. {@link #DISABLED} (no admin listener) does
 * nothing and hands out no LoopMeters, and callers skip their clock reads when they have none. Labels come from
 * fixed lists or the policy's namespaces only.
 */
public final class ProxyMetrics {
    public static final ProxyMetrics DISABLED = new ProxyMetrics(null);

    /** The label for requests to collections outside the policy. */
    public static final String OTHER_COLLECTION = "other";

    /**
     * Bucket bounds: fine below a millisecond, where the proxy's own part lies, then coarse up to
     * the slowest upstream answers.
     */
    private static final long[] LATENCY_BUCKETS_MICROS = {1, 2, 5, 10, 25, 50, 75, 100, 150, 200, 300, 500, 750,
        1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
        2_500_000, 5_000_000, 10_000_000};

    public enum Outcome {
        /** Passed on unchanged. */
        FORWARDED,
        /** Passed on after rewriting (encrypted values, rewritten filters). */
        REWRITTEN,
        /** Answered by the proxy with an error reply, not forwarded. */
        REFUSED,
        /** Not forwarded and not answerable (legacy write opcodes, unacknowledged writes): the connection closed. */
        CLOSED,
        /**
         * Answered by the proxy itself, nothing of it forwarded as it was: a write it carried out in
         * steps, a getMore or killCursors of a cursor it holds.
         */
        ANSWERED;

        static final int COUNT = values().length;
        final String label = name().toLowerCase(Locale.ROOT);
    }

    private final MeterRegistry registry;
    /** The meters for what every request moves, one set per event loop (its thread is their only writer). */
    private final Map<Executor, LoopMeters> loops = new ConcurrentHashMap<>();
    private final DataPathCollector collector;
    private final Map<String, Counter> refusals = new ConcurrentHashMap<>();
    private final Map<String, Counter> closes = new ConcurrentHashMap<>();
    private final Map<String, Counter> replyErrors = new ConcurrentHashMap<>();
    private final Map<String, Counter> auditLines = new ConcurrentHashMap<>();
    private final Map<String, Counter> evaluated = new ConcurrentHashMap<>();
    private final Counter accepted;

    public ProxyMetrics(PrometheusMeterRegistry registry) {
        this.registry = registry;
        if (registry == null) {
            accepted = null;
            collector = null;
            return;
        }
        accepted = Counter.builder("fleproxy.connections.accepted").description("client connections accepted")
                .register(registry);
        collector = new DataPathCollector(latencyBucketNanos());
        registry.getPrometheusRegistry().register(collector);
    }

    /** The latency buckets' upper bounds in nanoseconds, ascending. */
    static long[] latencyBucketNanos() {
        long[] bounds = new long[LATENCY_BUCKETS_MICROS.length];
        for (int i = 0; i < bounds.length; i++) {
            bounds[i] = LATENCY_BUCKETS_MICROS[i] * 1000;
        }
        return bounds;
    }

    public boolean enabled() {
        return registry != null;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Which proxy this is: {@code fleproxy_instance_info{proxy_instance, service_id} 1}, an info
     * metric (as Prometheus advises for what is the same for every series of a target: joined in a
     * query, {@code * on (instance) group_left (proxy_instance) fleproxy_instance_info}, rather than
     * a label on every series beside the scrape's own {@code instance}).
     */
    public void instance(String name, String serviceId) {
        if (registry != null) {
            io.micrometer.core.instrument.Gauge.builder("fleproxy.instance.info", () -> 1)
                    .description("this proxy's instance name (audit lines) and serviceId (load-balanced clients)")
                    .tag("proxy_instance", name).tag("service_id", serviceId).register(registry);
        }
    }

    public void accepted() {
        if (registry != null) {
            accepted.increment();
        }
    }

    /** A client connection closed; reason is a label from a fixed list (see docs/operations.md). */
    public void closed(String reason) {
        if (registry != null) {
            closes.computeIfAbsent(reason, r -> Counter.builder("fleproxy.connections.closed")
                    .description("client connections closed, by reason").tag("reason", r).register(registry))
                    .increment();
        }
    }

    /** A connection refused at accept because a limit (maxConnections) was reached: answered with the limit, or closed. */
    public void refusedConnection(String limit) {
        if (registry != null) {
            Counter.builder("fleproxy.connections.refused").description("client connections refused by a limit")
                    .tag("limit", limit).register(registry).increment();
        }
    }

    /**
     * The meters a connection on this event loop counts its requests, bytes and latencies in
     * (only the loop's thread may use them); null without metrics. A connection takes them once.
     */
    public LoopMeters loopMeters(Executor loop) {
        return registry == null ? null : loops.computeIfAbsent(loop, l -> collector.newLoop());
    }

    /**
     * A request the proxy answered with an error reply instead of forwarding it, by error code
     * (its {@link Outcome#REFUSED} is counted in the connection's {@link LoopMeters}).
     */
    public void refused(String command, int code) {
        if (registry == null) {
            return;
        }
        String label = CommandLabels.of(command);
        String c = Integer.toString(code);
        refusals.computeIfAbsent(label + ' ' + c, k -> Counter.builder("fleproxy.requests.refused")
                .description("requests refused by the proxy, by command and error code").tag("command", label)
                .tag("code", c).register(registry)).increment();
    }

    /** What became of a query the proxy evaluated on plaintext. */
    public enum EvaluatedOutcome {
        /** Its answer went to the client. */
        ANSWERED,
        /** Refused with 9720012: more candidates than the collection's scan budget. */
        OVER_BUDGET,
        /** Refused with 9720013: the answer does not fit in one reply. */
        TOO_LARGE,
        /** Refused with 9720013: the proxy-wide memory for evaluated queries (maxEvaluationBytes) is taken. */
        OVER_MEMORY;

        final String label = name().toLowerCase(Locale.ROOT);
    }

    /**
     * A reply the proxy replaced with an error of its own (a value it could not decrypt, a key it
     * could not get, an evaluated answer over budget or too large): a refusal of the command that
     * asked, counted with the refusals decided on requests, and in the reply errors by code.
     */
    public void replyError(String command, int code) {
        refused(command, code);
        if (registry != null) {
            String c = Integer.toString(code);
            replyErrors.computeIfAbsent(c, k -> Counter.builder("fleproxy.reply.errors")
                    .description("upstream replies the proxy replaced with an error, by code").tag("code", c)
                    .register(registry)).increment();
        }
    }

    /**
     * A query the proxy evaluated on plaintext (docs/query-model.md): answered, or refused (over
     * its scan budget, too large an answer); and the candidates it decrypted and examined for it.
     *
     * @param collection the policy's namespace (never a name a client chose)
     */
    public void evaluated(String collection, EvaluatedOutcome how, long candidates) {
        if (registry != null) {
            String outcome = how.label;
            evaluated.computeIfAbsent(collection + "\0" + outcome, k -> Counter.builder("fleproxy.evaluated.queries")
                    .description("queries the proxy evaluated on plaintext, by outcome").tag("collection", collection)
                    .tag("outcome", outcome).register(registry)).increment();
            evaluated.computeIfAbsent(collection, k -> Counter.builder("fleproxy.evaluated.candidates")
                    .description("documents the proxy decrypted and examined for queries it evaluated")
                    .tag("collection", collection).register(registry)).increment(candidates);
        }
    }

    /**
     * A request on an encrypted collection by a connection of this identity, and what it got of
     * each policy field (revealed, masked, refused, written). Identity labels come from the
     * policy's names and "anonymous" only, so a client cannot grow the label set.
     */
    public void identity(String identity, Map<String, Integer> fieldOutcomes) {
        if (registry != null) {
            IdentityCounters c = identityCounters.computeIfAbsent(identity, IdentityCounters::new);
            c.requests.increment();
            for (Map.Entry<String, Integer> outcome : fieldOutcomes.entrySet()) {
                c.fields.computeIfAbsent(outcome.getKey(), o -> Counter.builder("fleproxy.identity.fields")
                        .description("policy fields a request could read or write, by identity and what it got")
                        .tag("identity", identity).tag("outcome", o).register(registry)).increment(outcome.getValue());
            }
        }
    }

    /** An identity's counters: its requests, and its fields by outcome. */
    private final class IdentityCounters {
        final Counter requests;
        final Map<String, Counter> fields = new ConcurrentHashMap<>();

        IdentityCounters(String identity) {
            requests = Counter.builder("fleproxy.identity.requests")
                    .description("requests on encrypted collections, by the connection's identity")
                    .tag("identity", identity).register(registry);
        }
    }

    private final Map<String, IdentityCounters> identityCounters = new ConcurrentHashMap<>();

    /** Lines of the audit trail handed to its writer, or dropped because its queue was full (onFull: drop). */
    public void audit(boolean written) {
        if (registry != null) {
            String outcome = written ? "queued" : "dropped";
            auditLines.computeIfAbsent(outcome, k -> Counter.builder("fleproxy.audit.lines")
                    .description("audit trail lines queued for the writer, or dropped (onFull: drop)")
                    .tag("outcome", outcome).register(registry)).increment();
        }
    }

    /** A histogram with this module's latency buckets (the KMS's requests use it too). */
    Timer latencyTimer(String name, String description, String tagKey, String tagValue) {
        Duration[] buckets = new Duration[LATENCY_BUCKETS_MICROS.length];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = Duration.ofNanos(LATENCY_BUCKETS_MICROS[i] * 1000);
        }
        return Timer.builder(name).description(description).tag(tagKey, tagValue)
                .serviceLevelObjectives(buckets).register(registry);
    }

    /** Counts and times the resolver's KMS round trips (nothing with metrics off); call it before the first one. */
    public void observeKms(KeyResolver resolver) {
        MeterRegistry r = registry();
        if (r == null) {
            return; // metrics off
        }
        Map<String, Timer> kmsTimers = new ConcurrentHashMap<>();
        resolver.observe((operation, result, nanos) -> {
            io.micrometer.core.instrument.Counter.builder("fleproxy.kms.requests")
                    .description("key fetches from the KMS (Locate, Get, GetAttributes), by operation and result")
                    .tag("operation", operation).tag("result", result).register(r).increment();
            kmsTimers.computeIfAbsent(operation, op -> latencyTimer("fleproxy.kms.request.duration",
                    "time for one key's KMS round trips", "operation", op)).record(nanos, TimeUnit.NANOSECONDS);
        });
    }
}
