package dev.fleproxy.admin;

import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.CryptoStats;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.PolicyHolder;
import dev.fleproxy.server.ProxyServer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.util.internal.PlatformDependent;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The meters read when scraped: what the server, the key resolver, the policy and the ciphers
 * already count, and the JVM's and Netty's own (Micrometer's binders). Nothing here is on the
 * data path.
 */
public final class ProxyGauges implements AutoCloseable {
    private final JvmGcMetrics gc = new JvmGcMetrics();

    private ProxyGauges() {
    }

    /** Registers every gauge; resolver and policy may be null (no kmip: section). */
    public static ProxyGauges bind(ProxyMetrics metrics, ProxyServer server, KeyResolver resolver,
                                   PolicyHolder policy) {
        MeterRegistry r = metrics.registry();
        ProxyGauges g = new ProxyGauges();
        Gauge.builder("fleproxy.connections.open", server, ProxyServer::activeSessions)
                .description("client connections open now").register(r);
        crypto(r);
        // strongly held: the suppliers are made for this call, and a gauge holds its object weakly by default
        server.certificates().forEach((name, leaf) -> Gauge.builder("fleproxy.tls.certificate.expiry.timestamp", leaf,
                        c -> c.get().getNotAfter().getTime() / 1000.0).strongReference(true).baseUnit("seconds")
                .tag("certificate", name)
                .description("when the TLS certificate in force expires (its notAfter), in seconds since the epoch")
                .register(r));
        if (resolver != null) {
            keys(r, resolver);
        }
        if (policy != null) {
            for (boolean applied : new boolean[] {true, false}) {
                FunctionCounter.builder("fleproxy.policy.reloads", policy, p -> p.reloads(applied))
                        .description("policy reloads (SIGHUP or file change), applied or failed/refused")
                        .tag("result", applied ? "applied" : "failed").register(r);
            }
        }
        new JvmMemoryMetrics().bindTo(r);
        g.gc.bindTo(r);
        new JvmThreadMetrics().bindTo(r);
        new ClassLoaderMetrics().bindTo(r);
        new ProcessorMetrics().bindTo(r);
        new UptimeMetrics().bindTo(r);
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os) {
            FunctionCounter.builder("process.cpu", os, o -> o.getProcessCpuTime() / 1e9).baseUnit("seconds")
                    .description("CPU time (user and system) the process has used").register(r);
        }
        new FileDescriptorMetrics().bindTo(r);
        if (ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider netty) {
            new NettyAllocatorMetrics(netty).bindTo(r);
        }
        Gauge.builder("fleproxy.netty.direct.memory.used", PlatformDependent::usedDirectMemory)
                .description("direct memory Netty holds (all allocators), against its limit").baseUnit("bytes")
                .register(r);
        Gauge.builder("fleproxy.netty.direct.memory.max", PlatformDependent::maxDirectMemory)
                .description("the most direct memory Netty may hold").baseUnit("bytes").register(r);
        return g;
    }

    private static void crypto(MeterRegistry r) {
        for (CipherSuite s : CipherSuite.values()) {
            String suite = s.name().toLowerCase(Locale.ROOT);
            FunctionCounter.builder("fleproxy.crypto.values", s, CryptoStats::sealed).tag("suite", suite)
                    .tag("operation", "encrypt").description("field values encrypted or decrypted, by suite")
                    .register(r);
            FunctionCounter.builder("fleproxy.crypto.values", s, CryptoStats::opened).tag("suite", suite)
                    .tag("operation", "decrypt").description("field values encrypted or decrypted, by suite")
                    .register(r);
            FunctionCounter.builder("fleproxy.crypto", s, x -> CryptoStats.sealNanos(x) / 1e9).tag("suite", suite)
                    .tag("operation", "encrypt").baseUnit("seconds")
                    .description("time spent encrypting or decrypting field values, by suite").register(r);
            FunctionCounter.builder("fleproxy.crypto", s, x -> CryptoStats.openNanos(x) / 1e9).tag("suite", suite)
                    .tag("operation", "decrypt").baseUnit("seconds")
                    .description("time spent encrypting or decrypting field values, by suite").register(r);
            FunctionCounter.builder("fleproxy.crypto.failures", s, CryptoStats::failures).tag("suite", suite)
                    .description("envelopes that failed authentication (tampered, or another key's or field's)")
                    .register(r);
        }
    }

    private static void keys(MeterRegistry r, KeyResolver resolver) {
        FunctionCounter.builder("fleproxy.key.cache.lookups", resolver, KeyResolver::cacheHits).tag("result", "hit")
                .description("data-path key lookups: hit (held, within TTL), miss (waits for the KMS), stale (served "
                        + "past the TTL inside the outage window)").register(r);
        FunctionCounter.builder("fleproxy.key.cache.lookups", resolver, KeyResolver::cacheMisses).tag("result", "miss")
                .register(r);
        FunctionCounter.builder("fleproxy.key.cache.lookups", resolver, KeyResolver::staleServes)
                .tag("result", "stale").register(r);
        Gauge.builder("fleproxy.keys.cached", resolver, KeyResolver::keysCached).description("keys held in memory")
                .register(r);
        Gauge.builder("fleproxy.key.oldest.age", resolver, k -> k.oldestKeyAgeMillis() / 1000.0).baseUnit("seconds")
                .description("time since the KMS delivered the oldest key held").register(r);
        Gauge.builder("fleproxy.keys.in.outage.window", resolver, KeyResolver::keysInOutageWindow)
                .description("keys served past their TTL because the KMS does not answer (inside the outage window)")
                .register(r);
        Gauge.builder("fleproxy.kms.reachable", resolver, k -> k.kmsReachable() ? 1 : 0)
                .description("1 unless the last KMS round trip failed to reach it").register(r);
    }

    @Override
    public void close() {
        gc.close();
    }
}
