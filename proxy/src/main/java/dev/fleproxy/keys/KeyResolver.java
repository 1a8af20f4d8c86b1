package dev.fleproxy.keys;

import dev.fleproxy.crypto.DataKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * UUID → key, cached, and never waited for on the data path. {@link #cached} answers at once
 * from memory; a key that is not there is fetched by {@link #fetch} on the resolver's own threads
 * (a small pool, as many as the KMIP client has connections), and the caller resumes when the
 * fetch is over. A background task refreshes the keys in use after three quarters of their TTL,
 * so in steady state the data path never meets the KMS at all.
 *
 * <p>Staleness: past its TTL a key is served from memory only while its refresh is under way or
 * failing (the KMS has not answered for a quarter of the TTL: an outage), for at most {@code
 * outageWindow}; after that, requests that need it fail closed until the KMS answers again. A key
 * nobody used for a TTL is not refreshed; once expired it is fetched again on its next use.
 * Answers that say no (no such key, wrong algorithm, …) and failed fetches of keys never held are
 * remembered for {@code negativeTtl}, so a bad UUID cannot make every request a KMS round trip.
 * During an outage each key is retried every {@code retryInterval}; the outage is logged once,
 * then summarized (see {@link KmsHealth}).
 */
public final class KeyResolver implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KeyResolver.class);

    /**
     * Cache timing. {@code retryInterval}: during an outage, how long before a key is asked for
     * again. {@code fetchThreads}: fetches at once (at most the KMIP client's connections).
     */
    public record Settings(Duration ttl, Duration outageWindow, Duration negativeTtl, Duration retryInterval,
                           int fetchThreads) {
        public static final Settings DEFAULT = new Settings(Duration.ofMinutes(5), Duration.ofMinutes(15),
                Duration.ofSeconds(10), Duration.ofSeconds(5), 4);
    }

    private final KeySource source;
    private final Settings settings;
    private final Clock clock;
    private final long ttl;
    private final long refreshAfter;
    private final long negativeTtl;
    private final long outageLimit;
    private final long retryInterval;
    private final Map<UUID, CacheEntry> cache = new ConcurrentHashMap<>();
    private final Map<UUID, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();
    private final ExecutorService fetchers;
    private final ScheduledExecutorService refresher;
    private final KmsHealth health;
    private final AtomicLong fetches = new AtomicLong();
    private final AtomicLong staleServes = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private volatile FetchObserver observer = (operation, result, nanos) -> { };

    public KeyResolver(KeySource source, Settings settings, Clock clock) {
        this.source = source;
        this.settings = settings;
        this.clock = clock;
        this.ttl = settings.ttl().toMillis();
        this.refreshAfter = ttl * 3 / 4;
        this.negativeTtl = settings.negativeTtl().toMillis();
        this.outageLimit = ttl + settings.outageWindow().toMillis();
        this.retryInterval = settings.retryInterval().toMillis();
        this.health = new KmsHealth(source.describe(), settings);
        AtomicInteger n = new AtomicInteger();
        this.fetchers = Executors.newFixedThreadPool(Math.max(1, settings.fetchThreads()), r -> daemon(r,
                "kms-fetch-" + n.incrementAndGet()));
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "key-refresh"));
        long tick = Math.max(50, Math.min(1000, ttl / 10));
        refresher.scheduleWithFixedDelay(this::refreshDue, tick, tick, TimeUnit.MILLISECONDS);
    }

    public KeyResolver(KeySource source, Settings settings) {
        this(source, settings, Clock.systemUTC());
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    // ---- the data path: never waits ---------------------------------------------------------

    /**
     * The key as held in memory, if it may be served now; null if it must be fetched first
     * ({@link #fetch}). Throws the remembered failure of a key the KMS refused or could not
     * deliver. Never blocks and never asks the KMS.
     */
    public ResolvedKey cached(UUID id) {
        CacheEntry e = cache.get(id);
        if (e == null) {
            misses.increment();
            return null;
        }
        long now = clock.millis();
        if (now - e.lastUsed > 1000) {
            e.lastUsed = now; // coarse: keeps the hot path free of a write per lookup
        }
        if (e.key != null) {
            long age = now - e.fetchedAt;
            if (age < ttl) {
                hits.increment();
                return e.key;
            }
            if (age < outageLimit && e.refreshSince != 0) {
                staleServes.incrementAndGet();
                health.servedStale(id, age, outageLimit - age);
                return e.key;
            }
            misses.increment();
            return null;
        }
        misses.increment();
        if (now - e.fetchedAt < negativeTtl) {
            throw e.failure;
        }
        return null;
    }

    /**
     * Fetches these keys on the resolver's threads (a key already being fetched is not asked for
     * twice). The future completes when each has an answer in the cache, a key or a failure; it
     * never completes exceptionally.
     */
    public CompletableFuture<Void> fetch(Collection<UUID> ids) {
        if (ids.size() == 1) {
            return fetchOne(ids.iterator().next(), false);
        }
        return CompletableFuture.allOf(ids.stream().map(id -> fetchOne(id, false)).toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> fetchOne(UUID id, boolean refresh) {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> running = inFlight.putIfAbsent(id, mine);
        if (running != null) {
            return running;
        }
        try {
            fetchers.execute(() -> {
                try {
                    fetchNow(id, refresh);
                } catch (RuntimeException | Error e) {
                    log.error("key {}: fetching it failed unexpectedly", id, e);
                } finally {
                    inFlight.remove(id, mine);
                    mine.complete(null);
                }
            });
        } catch (RejectedExecutionException closed) {
            inFlight.remove(id, mine);
            mine.complete(null);
        }
        return mine;
    }

    /** One KMS round trip for one key; records the answer. Runs on a fetch thread only. */
    private void fetchNow(UUID id, boolean refresh) {
        CacheEntry previous = cache.get(id);
        long lastUsed = previous != null ? previous.lastUsed : clock.millis();
        fetches.incrementAndGet();
        long t0 = System.nanoTime();
        String operation = refresh ? "refresh" : "fetch";
        try {
            ResolvedKey k = source.fetch(id);
            observer.fetched(operation, "ok", System.nanoTime() - t0);
            cache.put(id, new CacheEntry(k, null, clock.millis(), 0, 0, lastUsed));
            health.answered();
            health.fresh(id);
        } catch (KeyAccessException failure) {
            observer.fetched(operation, failure.reason().name().toLowerCase(java.util.Locale.ROOT),
                    System.nanoTime() - t0);
            long now = clock.millis();
            if (failure.isDefinitive()) {
                health.answered();
                cache.put(id, new CacheEntry(null, failure, now, 0, 0, lastUsed));
                if (refresh && previous != null && previous.key != null) {
                    log.warn("key {}: {} (requests that need it are refused from now on)", id, failure.getMessage());
                }
                return;
            }
            health.failed(failure.getMessage());
            if (previous != null && previous.key != null && now - previous.fetchedAt < outageLimit) {
                long since = previous.refreshSince != 0 ? previous.refreshSince : now;
                cache.put(id, new CacheEntry(previous.key, null, previous.fetchedAt, since, now + retryInterval, lastUsed));
                return;
            }
            String why = previous != null && previous.key != null
                    ? "; the cached copy of key " + id + " is past its TTL and the "
                            + settings.outageWindow().toSeconds() + " s outage window"
                    : "; key " + id + " has not been fetched before";
            cache.put(id, new CacheEntry(null, new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE,
                    failure.getMessage() + why + ", so requests that need it are refused until the KMS answers",
                    failure), now, 0, 0, lastUsed));
        }
    }

    /**
     * The background task: refreshes keys in use once they are three quarters through their TTL
     * (during an outage, once per retry interval), forgets what can no longer be served, and lets
     * the outage log summarize. A refresh that has not answered by the TTL (it hangs, or the KMS
     * is down) leaves the key served from memory, inside the outage window.
     */
    private void refreshDue() {
        try {
            long now = clock.millis();
            for (Map.Entry<UUID, CacheEntry> me : cache.entrySet()) {
                UUID id = me.getKey();
                CacheEntry e = me.getValue();
                if (e.key == null) {
                    if (now - e.fetchedAt >= negativeTtl) {
                        cache.remove(id, e);
                    }
                    continue;
                }
                long age = now - e.fetchedAt;
                boolean inUse = now - e.lastUsed < ttl;
                if (!inUse) {
                    if (age >= outageLimit) {
                        cache.remove(id, e);
                    }
                    continue;
                }
                if (age < refreshAfter || now < e.retryAfter || inFlight.containsKey(id)) {
                    continue;
                }
                if (e.refreshSince == 0) {
                    // from now until a fresh answer, past its TTL the key is served from memory
                    cache.replace(id, e, new CacheEntry(e.key, null, e.fetchedAt, now, 0, e.lastUsed));
                }
                fetchOne(id, true);
            }
            health.tick(staleServes.get());
        } catch (RuntimeException e) {
            log.error("key refresh failed unexpectedly", e);
        }
    }

    // ---- blocking use: start-up, policy reloads, the keys command; never on an event loop ----

    /** The key and its state, fetched now if the cache cannot serve it. Blocks. */
    public ResolvedKey resolve(UUID id) {
        ResolvedKey k = cached(id);
        if (k != null) {
            return k;
        }
        fetch(java.util.List.of(id)).join();
        CacheEntry e = cache.get(id);
        if (e == null) {
            throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, "key " + id
                    + " could not be fetched (the resolver is closed)");
        }
        if (e.failure != null) {
            throw e.failure;
        }
        if (clock.millis() - e.fetchedAt >= ttl) {
            staleServes.incrementAndGet(); // the KMS did not answer: the copy in memory, inside the window
        }
        return e.key;
    }

    /** A key to encrypt new data with: it must be Active. Blocks (see {@link #resolve}). */
    public DataKey forEncryption(UUID id) {
        return resolve(id).usableTo(true).key();
    }

    /** A key to decrypt existing data with: Active or Deactivated. Blocks (see {@link #resolve}). */
    public DataKey forDecryption(UUID id) {
        return resolve(id).usableTo(false).key();
    }

    /** Fetches several keys now (at start-up), so that the data path finds them cached. Blocks. */
    public void prefetch(Iterable<UUID> ids) {
        for (UUID id : ids) {
            resolve(id);
        }
    }

    // ---- what the metrics and the readiness check read -------------------------------------------

    public void observe(FetchObserver o) {
        observer = o;
    }

    /** Data-path lookups answered from memory within the TTL. */
    public long cacheHits() {
        return hits.sum();
    }

    /** Data-path lookups that had to wait for the KMS (not held, or expired). */
    public long cacheMisses() {
        return misses.sum();
    }

    /**
     * True if the KMS has delivered this key and it is still in memory. Memory only: no lookup is
     * counted, nothing is fetched, the key is not marked in use.
     */
    public boolean holds(UUID id) {
        CacheEntry e = cache.get(id);
        return e != null && e.key != null;
    }

    /** Keys held in memory now. */
    public int keysCached() {
        return (int) cache.values().stream().filter(e -> e.key != null).count();
    }

    /** How long ago the KMS delivered the oldest key held now, in milliseconds (0 if none). */
    public long oldestKeyAgeMillis() {
        long now = clock.millis();
        return cache.values().stream().filter(e -> e.key != null).mapToLong(e -> now - e.fetchedAt).max().orElse(0);
    }

    /** Keys served past their TTL because the KMS does not answer (inside the outage window). */
    public int keysInOutageWindow() {
        long now = clock.millis();
        return (int) cache.values().stream().filter(e -> e.key != null && e.refreshSince != 0
                && now - e.fetchedAt >= ttl && now - e.fetchedAt < outageLimit).count();
    }

    /** False from a failed KMS round trip until the KMS answers again. */
    public boolean kmsReachable() {
        return health.reachable();
    }

    /**
     * How usable the key is now, to encrypt with ({@code encrypt}) or, for a previous key, to
     * decrypt with. Marks it in use, so the background task keeps it fresh (a readiness probe
     * thereby keeps the policy's keys warm). Does not count as a data-path lookup; never asks the KMS.
     */
    public Usability usability(UUID id, boolean encrypt) {
        CacheEntry e = cache.get(id);
        long now = clock.millis();
        if (e == null) {
            return new Usability("key " + id + " has not been fetched", true);
        }
        e.lastUsed = now;
        if (e.key != null) {
            long age = now - e.fetchedAt;
            if (age < ttl || age < outageLimit && e.refreshSince != 0) {
                String refusal = e.key.state().refusal(encrypt);
                return refusal == null ? Usability.OK : new Usability("key " + id + " " + refusal, false);
            }
            return new Usability("key " + id + " is past its TTL and the " + settings.outageWindow().toSeconds()
                    + " s outage window, and " + source.describe() + " has not delivered it again", true);
        }
        return new Usability(e.failure.getMessage(), now - e.fetchedAt >= negativeTtl);
    }

    /** Resolutions that went to the KMS (cold misses and refreshes). */
    public long kmsFetches() {
        return fetches.get();
    }

    /** Requests served from a cached copy past its TTL because the KMS did not answer. */
    public long staleServes() {
        return staleServes.get();
    }

    public String describeSource() {
        return source.describe();
    }

    /** The settings it was made with (the reload key check retries at their retry interval). */
    public Settings settings() {
        return settings;
    }

    @Override
    public void close() {
        refresher.shutdownNow();
        fetchers.shutdownNow();
    }
}
