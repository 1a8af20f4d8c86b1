package dev.fleproxy.rewrite.read;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * What the proxy remembers of each server cursor it saw opened on an encrypted collection, by
 * cursor id: who opened it ({@link CursorOwner}), and what a getMore's batch needs (the shape of
 * the query that opened it; drivers may send the getMore on another connection). A record lives as
 * long as its cursor: forgotten when the cursor is exhausted or killed, or after {@link #IDLE}
 * without a getMore (the server's own default cursor timeout). Bounded: past {@link #MAX} cursors
 * the least recently used is forgotten, and its getMore is refused rather than guessed, so a peer
 * opening cursors without end costs a fixed amount of memory.
 */
final class OpenCursors<T> {
    static final int MAX = 100_000;
    static final Duration IDLE = Duration.ofMinutes(10);

    /** One open cursor: its owner, what its batches need, and when it was last used. */
    record Open<T>(CursorOwner owner, T what, String ns, long lastUsed) {
    }

    private final int max;
    private final LongSupplier nanoClock;
    /** In access order: the least recently used first, so idle ones are found at the head. */
    private final Map<Long, Open<T>> byId = new LinkedHashMap<>(256, 0.75f, true);

    OpenCursors() {
        this(MAX, System::nanoTime);
    }

    /** @param max the cursors remembered at most; @param nanoClock the clock idle time is measured on */
    OpenCursors(int max, LongSupplier nanoClock) {
        this.max = max;
        this.nanoClock = nanoClock;
    }

    synchronized void opened(long id, String ns, CursorOwner owner, T what) {
        long now = nanoClock.getAsLong();
        forgetIdle(now);
        byId.put(id, new Open<>(owner, what, ns, now));
        if (byId.size() > max) {
            Iterator<Long> eldest = byId.keySet().iterator();
            eldest.next();
            eldest.remove();
        }
    }

    /** The cursor's record (now used again), or null if the proxy does not know it (any more). */
    synchronized Open<T> get(long id) {
        long now = nanoClock.getAsLong();
        forgetIdle(now);
        Open<T> o = byId.get(id);
        if (o != null) {
            o = new Open<>(o.owner(), o.what(), o.ns(), now);
            byId.put(id, o);
        }
        return o;
    }

    /** True if the proxy remembers this cursor, idle or not; its place in the order of use unchanged. */
    synchronized boolean knows(long id) {
        return byId.containsKey(id);
    }

    synchronized void closed(long id) {
        byId.remove(id);
    }

    synchronized int count() {
        return byId.size();
    }

    private void forgetIdle(long now) {
        long idle = IDLE.toNanos();
        for (Iterator<Open<T>> it = byId.values().iterator(); it.hasNext(); ) {
            if (now - it.next().lastUsed() <= idle) {
                break; // access order: the rest were used later
            }
            it.remove();
        }
    }
}
