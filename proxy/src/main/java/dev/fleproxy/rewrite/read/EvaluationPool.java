package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The threads that decrypt, decode and evaluate the candidates of large evaluated queries, off the
 * event loops: an event loop serves every connection it owns, so 10,000 candidates matched and
 * sorted on it stall them all (a find by _id on a plain collection waited seconds behind them).
 * Small work stays on the loop, where a hand-off would cost more than it saves.
 *
 * <p>Bounded: {@link #threads} threads (half the cores, at least one, so the loops keep the rest)
 * and {@link #QUEUED} steps waiting; a step past that is refused (9720013) instead of queued
 * without end. The connection's replies stay in request order because its reply lane waits
 * (parks) while its step runs.
 */
public final class EvaluationPool implements AutoCloseable {
    /** Steps waiting for a thread at most: beyond, memory and latency would grow with no bound. */
    static final int QUEUED = 256;
    /** A batch or a candidate set under this many bytes is evaluated on the loop. */
    static final long ON_LOOP_BYTES = 256 * 1024;

    private final ThreadPoolExecutor executor;
    private final int threads;

    public EvaluationPool(int threads) {
        this.threads = threads;
        AtomicInteger n = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUED),
                r -> {
                    Thread t = new Thread(() -> {
                        LowerPriority.ofThisThread();
                        r.run();
                    }, "fle-evaluation-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        executor.allowCoreThreadTimeOut(true); // idle threads (and their allocation caches) go
    }

    /** Half the cores, at least one. */
    public static EvaluationPool sized() {
        return new EvaluationPool(Math.max(1, Runtime.getRuntime().availableProcessors() / 2));
    }

    public int threads() {
        return threads;
    }

    /** True when work over this many bytes is worth a thread of its own. */
    static boolean offLoop(long bytes) {
        return bytes > ON_LOOP_BYTES;
    }

    /** Runs a step on a pool thread; refused (9720013) when as many steps wait as may. */
    <T> CompletableFuture<T> submit(String ns, Supplier<T> step) {
        try {
            return CompletableFuture.supplyAsync(step, executor);
        } catch (RejectedExecutionException e) {
            throw new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, ns + ": the proxy is evaluating as many queries "
                    + "on encrypted fields as it may at once (" + QUEUED + " waiting); try again, or narrow the query "
                    + "with a condition the server can evaluate");
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
