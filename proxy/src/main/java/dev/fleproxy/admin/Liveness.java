package dev.fleproxy.admin;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Whether the event loops answer: each is given an empty task and must run it within the
 * timeout. A loop stuck in a long task (or a deadlock) never does, and the proxy's connections
 * on it are stuck too, which is what a liveness probe is for.
 */
final class Liveness {
    private final Supplier<List<EventExecutor>> loops;
    private final long timeoutMillis;

    Liveness(Supplier<List<EventExecutor>> loops, long timeoutMillis) {
        this.loops = loops;
        this.timeoutMillis = timeoutMillis;
    }

    /** The loops that did not answer in time (empty if all did). Blocks up to the timeout. */
    List<String> stuck() {
        List<EventExecutor> all = loops.get();
        List<Future<?>> pings = new ArrayList<>(all.size());
        for (EventExecutor loop : all) {
            pings.add(loop.isShuttingDown() ? null : loop.submit(() -> { }));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<String> stuck = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            Future<?> f = pings.get(i);
            long left = Math.max(0, deadline - System.nanoTime());
            if (f == null) {
                stuck.add("event loop " + i + " is shutting down");
            } else if (!f.awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
                stuck.add("event loop " + i + " did not run a task within " + timeoutMillis + " ms");
            }
        }
        return stuck;
    }
}
