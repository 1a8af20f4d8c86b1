package dev.fleproxy.admin;

import com.mongodb.client.MongoClient;
import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.HandshakeFilter;
import dev.fleproxy.server.ProxyServer;
import dev.fleproxy.testing.ProxyFixture;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.util.concurrent.EventExecutor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The admin listener in front of the real proxy and embedded backend, driven by the Java driver:
 * the request counters and histograms move, /healthz fails while an event loop is stuck and
 * recovers after, and /readyz fails while the upstream is down.
 */
class AdminServerTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> get(AdminServer admin, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.address().getPort() + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthFollowsTheEventLoopsAndReadinessTheUpstream() throws Exception {
        EmbeddedBackend backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        PrometheusMeterRegistry registry = PrometheusLint.newRegistry();
        ProxyMetrics metrics = new ProxyMetrics(registry);
        HostPort upstream = new HostPort("127.0.0.1", backend.address().getPort());
        ProxyConfig config = new ProxyConfig(new HostPort("127.0.0.1", 0), upstream, 2000);
        ProxyServer proxy = ProxyServer.start(config, List.of(new HandshakeFilter()), metrics);
        ProxyGauges gauges = ProxyGauges.bind(metrics, proxy, null, null);
        AdminServer admin = AdminServer.start(config.withAdmin(new HostPort("127.0.0.1", 0)), registry, proxy,
                () -> Policy.EMPTY, null);
        try {
            try (MongoClient c = ProxyFixture.client("mongodb://127.0.0.1:" + proxy.address().getPort(), b -> { })) {
                for (int i = 0; i < 10; i++) {
                    c.getDatabase("m").getCollection("c").insertOne(new Document("_id", i));
                }
                assertEquals(10, c.getDatabase("m").getCollection("c").countDocuments());
            }
            String text = get(admin, "/metrics").body();
            assertTrue(text.contains("fleproxy_requests_total{command=\"insert\",outcome=\"forwarded\"} 10.0"), text);
            assertTrue(text.contains("fleproxy_proxy_duration_seconds_count{collection=\"other\"}"), text);
            assertEquals(200, get(admin, "/healthz").statusCode());
            assertEquals(200, get(admin, "/readyz").statusCode());

            // a task that never yields: every connection on that loop is stuck, and /healthz says so
            CountDownLatch release = new CountDownLatch(1);
            EventExecutor loop = proxy.eventLoops().get(1);
            loop.execute(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            HttpResponse<String> stuck = get(admin, "/healthz");
            release.countDown();
            assertEquals(503, stuck.statusCode());
            assertTrue(stuck.body().contains("did not run a task within"), stuck.body());
            assertEquals(200, get(admin, "/healthz").statusCode());

            backend.close();
            HttpResponse<String> down = get(admin, "/readyz");
            assertEquals(503, down.statusCode());
            assertTrue(down.body().contains("\"ready\": false") && down.body().contains("unreachable"), down.body());
            assertTrue(get(admin, "/metrics").body().contains("fleproxy_ready 0.0"));
            assertEquals(405, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + admin.address().getPort() + "/metrics")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
        } finally {
            admin.close();
            gauges.close();
            proxy.close();
            backend.close();
        }
    }
}
