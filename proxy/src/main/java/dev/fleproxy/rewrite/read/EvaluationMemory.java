package dev.fleproxy.rewrite.read;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The proxy-wide budget of memory for evaluated queries (limits' maxEvaluationBytes): the
 * candidates of every query being evaluated and the answers held as the proxy's own cursors draw
 * on it together, so that many clients at once cannot make the proxy hold more than it was given
 * (each query's own caps bound one client only). A query that would pass it is refused (9720013)
 * rather than waited for: a client retries, where a wait would hold its connection and memory.
 *
 * <p>Candidates are charged {@link #DECODED_COST} times their BSON bytes: the proxy holds each
 * decoded (1.4 times its bytes for documents of 4 KB of text, measured with the bson 5.14 codec)
 * and, when answered as read, its bytes as well. A batch is charged whole while it is examined,
 * then only the candidates kept of it ({@link MatchedCandidates}). Thread-safe: candidates are
 * taken on the evaluation pool, and released on the connection's event loop.
 */
public final class EvaluationMemory {
    /** What one byte of candidates costs the heap while it is evaluated. */
    static final int DECODED_COST = 3;

    private final long budget;
    private final AtomicLong used = new AtomicLong();

    public EvaluationMemory(long budget) {
        this.budget = budget;
    }

    /** A budget no query reaches: for tests and tools that build the proxy's parts alone. */
    public static EvaluationMemory unbounded() {
        return new EvaluationMemory(Long.MAX_VALUE);
    }

    public long budget() {
        return budget;
    }

    public long used() {
        return used.get();
    }

    /** Takes {@code bytes} if they fit in what is left; false (nothing taken) if not. */
    boolean take(long bytes) {
        while (true) {
            long now = used.get();
            if (now + bytes > budget || now + bytes < 0) {
                return false;
            }
            if (used.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    void give(long bytes) {
        used.addAndGet(-bytes);
    }

    /**
     * What one query holds: taken as its batches arrive, or ahead of them ({@link #reserve}), and
     * given back whole once, when it ends.
     */
    final class Lease {
        /** Taken from the budget for this query. */
        private long taken;
        /** Of which its candidates use now. */
        private long used;
        /** What it took ahead of its batches ({@link #reserve}): kept while it lasts, however little is used. */
        private long reserved;
        private boolean ended;

        /** Uses {@code bytes} more, taking from the budget what the reservation does not cover; false if it has not that much left. */
        synchronized boolean grow(long bytes) {
            if (ended) {
                return false;
            }
            long more = used + bytes - taken;
            if (more > 0 && !take(more)) {
                return false;
            }
            taken += Math.max(0, more);
            used += bytes;
            return true;
        }

        /**
         * Uses {@code bytes} less (what was examined and not kept): given back to the budget down
         * to what the reservation holds.
         */
        synchronized void shrink(long bytes) {
            if (ended || bytes <= 0) {
                return;
            }
            used = Math.max(0, used - bytes);
            long after = Math.max(reserved, used); // taken is never less than either
            give(taken - after);
            taken = after;
        }

        /**
         * Takes what the query will likely need in all, ahead of its batches: a query that cannot
         * have it is refused after its first batch, instead of after many batches read for
         * nothing while others hold the rest (30 clients refused that late answered 6 queries in
         * a minute and were refused 139 times). False if the budget has not that much left.
         */
        synchronized boolean reserve(long total) {
            if (ended) {
                return false;
            }
            long more = total - taken;
            if (more > 0 && !take(more)) {
                return false;
            }
            taken += Math.max(0, more);
            reserved = Math.max(reserved, total);
            return true;
        }

        /** True once the query ended (answered, refused, or its connection closed). */
        synchronized boolean ended() {
            return ended;
        }

        /** The proxy-wide budget this lease draws on. */
        long budget() {
            return budget;
        }

        /** Gives everything back; later growth is refused (the query ended while its pool step ran). */
        synchronized void end() {
            if (!ended) {
                ended = true;
                give(taken);
                taken = 0;
            }
        }
    }

    Lease lease() {
        return new Lease();
    }
}
