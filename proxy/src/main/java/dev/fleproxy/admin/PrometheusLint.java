package dev.fleproxy.admin;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import java.util.Map;

/**
 * Makes the binders' meters pass {@code promtool check metrics}: every metric gets help text
 * (Netty's allocator gauges have none), a CPU count is not named like a histogram's {@code _count},
 * and the process CPU time is published in seconds as Prometheus names it ({@code
 * process_cpu_seconds_total}, registered by {@link ProxyGauges}) instead of Micrometer's {@code
 * process_cpu_time_ns_total}.
 */
public final class PrometheusLint implements MeterFilter {
    private static final Map<String, String> HELP = Map.of(
            "netty.allocator.memory.used", "memory the Netty allocator holds, by memory type",
            "netty.allocator.memory.pinned", "memory of the Netty allocator in use by buffers, by memory type",
            "netty.allocator.pooled.arenas", "arenas of the pooled Netty allocator",
            "netty.allocator.pooled.cache.size", "sizes of the pooled Netty allocator's caches",
            "netty.allocator.pooled.threadlocal.caches", "thread-local caches of the pooled Netty allocator",
            "netty.allocator.pooled.chunk.size", "chunk size of the pooled Netty allocator");

    private PrometheusLint() {
    }

    /** A Prometheus registry with this filter in place, before any meter is registered. */
    public static io.micrometer.prometheusmetrics.PrometheusMeterRegistry newRegistry() {
        var r = new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
                io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
        r.config().meterFilter(new PrometheusLint());
        return r;
    }

    @Override
    public io.micrometer.core.instrument.config.MeterFilterReply accept(Meter.Id id) {
        return id.getName().equals("process.cpu.time") ? io.micrometer.core.instrument.config.MeterFilterReply.DENY
                : io.micrometer.core.instrument.config.MeterFilterReply.NEUTRAL;
    }

    @Override
    public Meter.Id map(Meter.Id id) {
        Meter.Id out = id.getName().equals("system.cpu.count") ? id.withName("system.cpus") : id;
        if (out.getDescription() == null) {
            String help = HELP.getOrDefault(out.getName(), out.getName().replace('.', ' '));
            out = new Meter.Id(out.getName(), io.micrometer.core.instrument.Tags.of(out.getTagsAsIterable()),
                    out.getBaseUnit(), help, out.getType());
        }
        return out;
    }
}
