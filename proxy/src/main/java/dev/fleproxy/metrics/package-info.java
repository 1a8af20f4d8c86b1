/**
 * What the data path records, and only that: {@link dev.fleproxy.metrics.ProxyMetrics} (the
 * Micrometer registry's counters and timers) and the per-event-loop {@link
 * dev.fleproxy.metrics.LoopMeters} that {@link dev.fleproxy.metrics.DataPathCollector} sums at a
 * scrape. Reading metrics (the admin listener, gauges, readiness) lives in {@code admin/}, above.
 *
 * <p>Adding a metric, the one way: explain it in docs/operations.md's table first (the Compose
 * tests fail when a metric the dashboard or alerts use is not there), then
 * <ul>
 *   <li>a count or time per message, on an event loop: a field in {@code LoopMeters} (one loop
 *       writes it, no locking) and its family in {@code DataPathCollector};</li>
 *   <li>an event off the hot path (a refusal, a close, a KMS round trip): a method on {@code
 *       ProxyMetrics} that registers or finds the Micrometer meter (no-op when metrics are off);</li>
 *   <li>a value some other part already holds (cache size, reload counts, certificate expiry): a
 *       gauge in {@code admin.ProxyGauges} that reads it at scrape time; the part itself records
 *       nothing (the cipher counts in {@code crypto.CryptoStats} are such a value: crypto/ sits below
 *       every other package and cannot see a registry).</li>
 * </ul>
 * Labels come from fixed lists or the policy, never from what a client sends.
 */
package dev.fleproxy.metrics;
