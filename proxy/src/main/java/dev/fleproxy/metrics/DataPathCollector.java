package dev.fleproxy.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Publishes the event loops' {@link LoopMeters} through the Prometheus client's collector API (the
 * registry behind Micrometer's, so they appear in the same /metrics): at each scrape it sums every
 * loop's share into {@code fleproxy_requests_total}, {@code fleproxy_bytes_total} and the three
 * latency histograms.
 */
final class DataPathCollector implements MultiCollector {
    private static final String[] BYTE_LABELS = {"client", "received", "client", "sent", "upstream", "received",
        "upstream", "sent"};
    private static final String[] HISTOGRAM_NAMES = {"fleproxy_request_duration_seconds",
        "fleproxy_upstream_duration_seconds", "fleproxy_proxy_duration_seconds"};
    private static final String[] HISTOGRAM_HELP = {
        "time from reading a request to writing its reply, as the client sees it (less the network)",
        "time from forwarding a request to reading the upstream's reply",
        "what the proxy adds to a request: reading it to forwarding it, plus reading the reply to writing it "
                + "(rewriting, crypto, waits for keys)"};

    private final List<LoopMeters> loops = new CopyOnWriteArrayList<>();
    private final long[] boundsNanos;
    private final double[] boundsSeconds;

    DataPathCollector(long[] boundsNanos) {
        this.boundsNanos = boundsNanos.clone();
        this.boundsSeconds = new double[boundsNanos.length + 1];
        for (int i = 0; i < boundsNanos.length; i++) {
            boundsSeconds[i] = Unit.nanosToSeconds(boundsNanos[i]);
        }
        boundsSeconds[boundsNanos.length] = Double.POSITIVE_INFINITY;
    }

    /** A new event loop's meters, counted from now on. */
    LoopMeters newLoop() {
        LoopMeters m = new LoopMeters(boundsNanos);
        loops.add(m);
        return m;
    }

    @Override
    public MetricSnapshots collect() {
        long[] requests = new long[CommandLabels.LABELS.size() * ProxyMetrics.Outcome.COUNT];
        long[] bytes = new long[LoopMeters.BYTE_COUNTERS];
        Map<String, long[]> latencies = new TreeMap<>();
        for (LoopMeters m : loops) {
            m.addRequests(requests);
            m.addBytes(bytes);
            m.addLatencies(latencies);
        }
        List<MetricSnapshot> out = new ArrayList<>();
        out.add(requests(requests));
        out.add(bytes(bytes));
        for (int h = 0; h < LoopMeters.HISTOGRAMS; h++) {
            out.add(histogram(h, latencies));
        }
        return new MetricSnapshots(out);
    }

    @Override
    public List<String> getPrometheusNames() {
        List<String> names = new ArrayList<>(List.of("fleproxy_requests", "fleproxy_bytes"));
        names.addAll(Arrays.asList(HISTOGRAM_NAMES));
        return names;
    }

    private static CounterSnapshot requests(long[] counts) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name("fleproxy_requests")
                .help("client requests, by command and outcome");
        ProxyMetrics.Outcome[] outcomes = ProxyMetrics.Outcome.values();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] > 0) { // as a counter made on first use: only what happened is listed
                b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(counts[i])
                        .labels(Labels.of("command", CommandLabels.LABELS.get(i / outcomes.length),
                                "outcome", outcomes[i % outcomes.length].label))
                        .build());
            }
        }
        return b.build();
    }

    private static CounterSnapshot bytes(long[] counts) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name("fleproxy_bytes")
                .help("wire message bytes, by side (client or upstream) and direction (received or sent by the proxy)");
        for (int i = 0; i < counts.length; i++) {
            b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(counts[i])
                    .labels(Labels.of("side", BYTE_LABELS[2 * i], "direction", BYTE_LABELS[2 * i + 1])).build());
        }
        return b.build();
    }

    private HistogramSnapshot histogram(int h, Map<String, long[]> latencies) {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(HISTOGRAM_NAMES[h]).help(HISTOGRAM_HELP[h])
                .unit(Unit.SECONDS);
        int stride = boundsSeconds.length + 1;
        for (Map.Entry<String, long[]> e : latencies.entrySet()) {
            long[] slots = e.getValue();
            long[] counts = Arrays.copyOfRange(slots, h * stride, h * stride + boundsSeconds.length);
            b.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(boundsSeconds, counts))
                    .sum(Unit.nanosToSeconds(slots[h * stride + stride - 1]))
                    .labels(Labels.of("collection", e.getKey())).build());
        }
        return b.build();
    }
}
