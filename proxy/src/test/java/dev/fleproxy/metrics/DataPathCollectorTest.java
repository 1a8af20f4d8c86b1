package dev.fleproxy.metrics;

import dev.fleproxy.admin.PrometheusLint;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each event loop's meters, summed at scrape time into the Prometheus text format. */
class DataPathCollectorTest {
    private static double value(String text, String series) {
        for (String line : text.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1));
            }
        }
        return Double.NaN;
    }

    @Test
    void twoLoopsCountedApartAreSummedWithCumulativeBuckets() throws Exception {
        PrometheusMeterRegistry registry = PrometheusLint.newRegistry();
        ProxyMetrics metrics = new ProxyMetrics(registry);
        ExecutorService a = Executors.newSingleThreadExecutor();
        ExecutorService b = Executors.newSingleThreadExecutor();
        try {
            // each loop's meters are used on that loop's thread only, as a connection does
            a.submit(() -> {
                LoopMeters m = metrics.loopMeters(a);
                for (int i = 0; i < 3; i++) {
                    m.request("find", ProxyMetrics.Outcome.FORWARDED);
                    m.clientBytes(true, 100);
                    m.latency("db.c", 40_000, 30_000); // 40 µs in all, 30 µs upstream, 10 µs the proxy's
                }
            }).get();
            b.submit(() -> {
                LoopMeters m = metrics.loopMeters(b);
                m.request("find", ProxyMetrics.Outcome.FORWARDED);
                m.request("madeUpCommand", ProxyMetrics.Outcome.REFUSED);
                m.request(null, ProxyMetrics.Outcome.CLOSED);
                m.upstreamBytes(false, 7);
                m.latency("db.c", 20_000_000_000L, 0); // 20 s: past the last bound, in +Inf only
                m.latency(ProxyMetrics.OTHER_COLLECTION, 1_000, 1_000);
            }).get();
        } finally {
            a.shutdown();
            b.shutdown();
            a.awaitTermination(5, TimeUnit.SECONDS);
            b.awaitTermination(5, TimeUnit.SECONDS);
        }
        String text = registry.scrape();
        assertEquals(4, value(text, "fleproxy_requests_total{command=\"find\",outcome=\"forwarded\"}"), text);
        assertEquals(1, value(text, "fleproxy_requests_total{command=\"other\",outcome=\"refused\"}"), text);
        assertEquals(1, value(text, "fleproxy_requests_total{command=\"none\",outcome=\"closed\"}"), text);
        assertTrue(Double.isNaN(value(text, "fleproxy_requests_total{command=\"find\",outcome=\"refused\"}")),
                "what never happened is not listed");
        assertEquals(300, value(text, "fleproxy_bytes_total{direction=\"received\",side=\"client\"}"), text);
        assertEquals(7, value(text, "fleproxy_bytes_total{direction=\"sent\",side=\"upstream\"}"), text);
        assertEquals(0, value(text, "fleproxy_bytes_total{direction=\"sent\",side=\"client\"}"), text);

        String proxy = "fleproxy_proxy_duration_seconds";
        assertEquals(0, value(text, proxy + "_bucket{collection=\"db.c\",le=\"5.0E-6\"}"), text);
        assertEquals(3, value(text, proxy + "_bucket{collection=\"db.c\",le=\"1.0E-5\"}"), "10 µs is in le=10µs");
        assertEquals(4, value(text, proxy + "_bucket{collection=\"db.c\",le=\"+Inf\"}"), text);
        assertEquals(4, value(text, proxy + "_count{collection=\"db.c\"}"), text);
        assertEquals(20.00003, value(text, proxy + "_sum{collection=\"db.c\"}"), 1e-9, text);
        String request = "fleproxy_request_duration_seconds";
        assertEquals(3, value(text, request + "_bucket{collection=\"db.c\",le=\"10.0\"}"), text);
        assertEquals(4, value(text, request + "_bucket{collection=\"db.c\",le=\"+Inf\"}"), text);
        String upstream = "fleproxy_upstream_duration_seconds";
        assertEquals(1, value(text, upstream + "_bucket{collection=\"db.c\",le=\"1.0E-6\"}"), "the 0 of the 20 s one");
        assertEquals(4, value(text, upstream + "_bucket{collection=\"db.c\",le=\"5.0E-5\"}"), text);
        assertEquals(1, value(text, proxy + "_count{collection=\"other\"}"), text);
        assertTrue(text.contains("# TYPE " + proxy + " histogram"), text);
    }

    @Test
    void withoutMetricsThereAreNoMeters() {
        Executor loop = Runnable::run;
        assertNull(ProxyMetrics.DISABLED.loopMeters(loop));
    }
}
