package dev.fleproxy.keys;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The KMS outage log: the first failed attempt of an outage is logged at once, the rest are
 * counted and summarized once a minute, and the end of the outage says how long it lasted. A key
 * served from memory past its TTL is named once, until it is fetched afresh. So a KMS down for an hour
 * writes about sixty lines, not one per request or retry.
 */
final class KmsHealth {
    private static final Logger log = LoggerFactory.getLogger(KeyResolver.class);
    private static final long SUMMARY_EVERY_NANOS = 60_000_000_000L;

    private final String kms;
    private final KeyResolver.Settings settings;
    private final Set<UUID> namedStale = ConcurrentHashMap.newKeySet();
    private boolean down;
    private long downSince;
    private long failures;
    private long failuresSinceSummary;
    private long lastSummary;
    private long staleAtSummary;
    private String lastError;

    KmsHealth(String kms, KeyResolver.Settings settings) {
        this.kms = kms;
        this.settings = settings;
    }

    /** A fetch could not reach the KMS (or it did not answer in time). */
    synchronized void failed(String error) {
        lastError = error;
        failures++;
        failuresSinceSummary++;
        if (!down) {
            down = true;
            downSince = System.nanoTime();
            lastSummary = downSince;
            failuresSinceSummary = 0;
            log.warn("KMS outage: {}; keys in use keep serving from memory for up to {} s past their TTL, each is asked "
                    + "for again every {} s, and this is summarized once a minute until {} answers", error,
                    settings.outageWindow().toSeconds(), settings.retryInterval().toSeconds(), kms);
        }
    }

    /** False from a failed attempt until the KMS answers again. */
    synchronized boolean reachable() {
        return !down;
    }

    /** The KMS answered (a key, or a definitive no). */
    synchronized void answered() {
        if (down) {
            down = false;
            log.info("{} answers again after {} s unreachable ({} failed attempt(s))", kms,
                    (System.nanoTime() - downSince) / 1_000_000_000L, failures);
            failures = 0;
        }
    }

    /** A key was fetched afresh: if it is served from memory past its TTL again, that is said again. */
    void fresh(UUID id) {
        namedStale.remove(id);
    }

    /** A key was served from memory past its TTL: named once, until it is fetched afresh. */
    void servedStale(UUID id, long ageMillis, long windowLeftMillis) {
        if (namedStale.add(id)) {
            log.warn("key {}: serving the copy in memory, {} s old (past its TTL), while {} does not answer; the outage "
                    + "window ends in {} s", id, ageMillis / 1000, kms, windowLeftMillis / 1000);
        }
    }

    /** Called by the refresh task: writes the minute's summary during an outage. */
    synchronized void tick(long staleServesTotal) {
        if (!down || System.nanoTime() - lastSummary < SUMMARY_EVERY_NANOS) {
            return;
        }
        lastSummary = System.nanoTime();
        log.warn("{} still unreachable after {} s: {} failed attempt(s) in the last minute (last: {}); {} request(s) "
                + "served from memory past the TTL", kms, (lastSummary - downSince) / 1_000_000_000L,
                failuresSinceSummary, lastError, staleServesTotal - staleAtSummary);
        failuresSinceSummary = 0;
        staleAtSummary = staleServesTotal;
    }
}
