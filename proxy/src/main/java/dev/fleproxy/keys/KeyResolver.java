package dev.fleproxy.keys;

import dev.fleproxy.crypto.DataKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * UUID → key, cached. A cached key is served for {@code ttl}; after three quarters of it a
 * background refresh fetches it again, so in steady state the data path never waits for the KMS
 * (the {@link #kmsFetches()} counter proves it). If the KMS cannot be reached when a key is due,
 * the cached copy keeps serving for a further {@code outageWindow}; after that, requests that need
 * the key fail closed with a clear error, until the KMS answers again. Definitive answers (no such
 * key, wrong algorithm, …) are remembered for {@code negativeTtl} so that a bad UUID cannot make
 * every request a KMS round trip.
 */
public final class KeyResolver implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KeyResolver.class);

    /**
     * Cache timing. {@code retryInterval}: during an outage, how long a request served from the
     * cache waits before it asks the KMS again (so an outage does not turn every request into a
     * connection timeout).
     */
    public record Settings(Duration ttl, Duration outageWindow, Duration negativeTtl, Duration retryInterval) {
        public static final Settings DEFAULT = new Settings(Duration.ofMinutes(5), Duration.ofMinutes(15),
                Duration.ofSeconds(10), Duration.ofSeconds(5));
    }

    /** Times are clock milliseconds: the data path reads them without allocating. */
    private static final class Entry {
        final ResolvedKey key;
        final KeyAccessException failure;
        final long fetchedAt;
        /** Set while the KMS is unreachable: no new attempt before this time; 0 otherwise. */
        final long retryAfter;

        Entry(ResolvedKey key, KeyAccessException failure, long fetchedAt, long retryAfter) {
            this.key = key;
            this.failure = failure;
            this.fetchedAt = fetchedAt;
            this.retryAfter = retryAfter;
        }
    }

    private final KeySource source;
    private final Settings settings;
    private final Clock clock;
    private final long ttl;
    private final long refreshAfter;
    private final long negativeTtl;
    private final long outageLimit;
    private final Map<UUID, Entry> cache = new ConcurrentHashMap<>();
    private final Map<UUID, Object> locks = new ConcurrentHashMap<>();
    private final Map<UUID, Boolean> refreshing = new ConcurrentHashMap<>();
    private final ExecutorService refresher;
    private final AtomicLong fetches = new AtomicLong();
    private final AtomicLong staleServes = new AtomicLong();

    public KeyResolver(KeySource source, Settings settings, Clock clock) {
        this.source = source;
        this.settings = settings;
        this.clock = clock;
        this.ttl = settings.ttl().toMillis();
        this.refreshAfter = ttl * 3 / 4;
        this.negativeTtl = settings.negativeTtl().toMillis();
        this.outageLimit = ttl + settings.outageWindow().toMillis();
        this.refresher = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "key-refresh");
            t.setDaemon(true);
            return t;
        });
    }

    public KeyResolver(KeySource source, Settings settings) {
        this(source, settings, Clock.systemUTC());
    }

    /** A key to encrypt new data with: it must be Active. */
    public DataKey forEncryption(UUID id) {
        ResolvedKey k = resolve(id);
        if (!k.state().mayEncrypt()) {
            throw new KeyAccessException(id, KeyAccessException.Reason.WRONG_STATE, "key " + id + " is "
                    + k.state() + "; only Active keys encrypt" + hint(k.state()));
        }
        return k.key();
    }

    /** A key to decrypt existing data with: Active or Deactivated. */
    public DataKey forDecryption(UUID id) {
        ResolvedKey k = resolve(id);
        if (!k.state().mayDecrypt()) {
            throw new KeyAccessException(id, KeyAccessException.Reason.WRONG_STATE, "key " + id + " is "
                    + k.state() + "; only Active or Deactivated keys decrypt" + hint(k.state()));
        }
        return k.key();
    }

    private static String hint(KeyState s) {
        return switch (s) {
            case PRE_ACTIVE -> " (activate it in the KMS first)";
            case DEACTIVATED -> " (it was revoked: existing data still decrypts)";
            default -> "";
        };
    }

    /** Fetches several keys now (at start-up), so that the data path finds them cached. */
    public void prefetch(Iterable<UUID> ids) {
        for (UUID id : ids) {
            resolve(id);
        }
    }

    /** Resolutions that went to the KMS (cold misses and refreshes). */
    public long kmsFetches() {
        return fetches.get();
    }

    /** Requests served from a cached copy past its TTL because the KMS was unreachable. */
    public long staleServes() {
        return staleServes.get();
    }

    /** The key and its state, from the cache if fresh enough. */
    public ResolvedKey resolve(UUID id) {
        long now = clock.millis();
        Entry e = cache.get(id);
        if (e != null && fresh(e, now)) {
            if (e.key != null && now - e.fetchedAt > refreshAfter) {
                refreshInBackground(id);
            }
            return valueOf(e);
        }
        if (e != null && e.retryAfter != 0 && now < e.retryAfter && withinOutageWindow(e, now)) {
            staleServes.incrementAndGet();
            return e.key;
        }
        synchronized (locks.computeIfAbsent(id, k -> new Object())) {
            Entry again = cache.get(id);
            if (again != null && again != e && fresh(again, clock.millis())) {
                return valueOf(again); // another thread fetched it meanwhile
            }
            return fetch(id, again);
        }
    }

    private boolean fresh(Entry e, long now) {
        return now - e.fetchedAt < (e.key != null ? ttl : negativeTtl);
    }

    private boolean withinOutageWindow(Entry e, long now) {
        return e.key != null && now - e.fetchedAt < outageLimit;
    }

    private static ResolvedKey valueOf(Entry e) {
        if (e.failure != null) {
            throw e.failure;
        }
        return e.key;
    }

    /** Asks the KMS; on an outage falls back to a cached copy still inside the outage window. */
    private ResolvedKey fetch(UUID id, Entry previous) {
        fetches.incrementAndGet();
        try {
            ResolvedKey k = source.fetch(id);
            cache.put(id, new Entry(k, null, clock.millis(), 0));
            return k;
        } catch (KeyAccessException failure) {
            long now = clock.millis();
            if (failure.isDefinitive()) {
                cache.put(id, new Entry(null, failure, now, 0));
                throw failure;
            }
            if (previous != null && previous.key != null) {
                long age = now - previous.fetchedAt;
                if (age < outageLimit) {
                    staleServes.incrementAndGet();
                    cache.put(id, new Entry(previous.key, null, previous.fetchedAt,
                            now + settings.retryInterval().toMillis()));
                    log.warn("key {}: {}; serving the cached copy ({} s old, outage window ends in {} s)", id,
                            failure.getMessage(), age / 1000, (outageLimit - age) / 1000);
                    return previous.key;
                }
                throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, failure.getMessage()
                        + "; the cached copy of key " + id + " is " + age / 1000
                        + " s old, past its TTL and the " + settings.outageWindow().toSeconds()
                        + " s outage window, so requests that need it are refused until the KMS answers", failure);
            }
            throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, failure.getMessage()
                    + "; key " + id + " has not been fetched before, so requests that need it are refused", failure);
        }
    }

    private void refreshInBackground(UUID id) {
        if (refreshing.putIfAbsent(id, Boolean.TRUE) != null) {
            return;
        }
        refresher.execute(() -> {
            try {
                synchronized (locks.computeIfAbsent(id, k -> new Object())) {
                    Entry e = cache.get(id);
                    if (e != null && clock.millis() - e.fetchedAt > refreshAfter) {
                        fetch(id, e);
                    }
                }
            } catch (KeyAccessException e) {
                log.warn("key {}: background refresh failed: {}", id, e.getMessage());
            } finally {
                refreshing.remove(id);
            }
        });
    }

    public String describeSource() {
        return source.describe();
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }
}
