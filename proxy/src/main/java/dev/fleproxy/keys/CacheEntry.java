package dev.fleproxy.keys;

/**
 * One answer {@link KeyResolver} holds for a key: the key, or why there is none. Times are clock
 * milliseconds, read on the data path without allocating.
 */
final class CacheEntry {
    final ResolvedKey key;
    final KeyAccessException failure;
    final long fetchedAt;
    /** When the background refresh of this key began (0 if none is under way or failing). */
    final long refreshSince;
    /** During an outage: no new attempt before this time (0 otherwise). */
    final long retryAfter;
    volatile long lastUsed;

    CacheEntry(ResolvedKey key, KeyAccessException failure, long fetchedAt, long refreshSince, long retryAfter,
               long lastUsed) {
        this.key = key;
        this.failure = failure;
        this.fetchedAt = fetchedAt;
        this.refreshSince = refreshSince;
        this.retryAfter = retryAfter;
        this.lastUsed = lastUsed;
    }
}
