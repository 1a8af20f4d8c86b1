package dev.fleproxy.rewrite.read;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the proxy remembers of each cursor it saw opened on an encrypted collection, by cursor id,
 * so that a getMore's batch is read with the shape of the query that opened it (drivers may send
 * the getMore on another connection). Bounded: past {@link #MAX} cursors the least recently used
 * is forgotten, and its getMore is refused rather than guessed, so a peer opening cursors without
 * end costs a fixed amount of memory.
 */
final class OpenCursors<T> {
    static final int MAX = 100_000;

    private final Map<Long, T> byId = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, T> eldest) {
            return size() > MAX;
        }
    };

    synchronized void opened(long id, T what) {
        byId.put(id, what);
    }

    synchronized T get(long id) {
        return byId.get(id);
    }

    synchronized void closed(long id) {
        byId.remove(id);
    }

}
