package dev.fleproxy.ycsb;

import org.apache.htrace.core.Tracer;
import org.bson.BsonDocument;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.DBFactory;
import site.ycsb.UnknownDBException;
import site.ycsb.Workload;
import site.ycsb.WorkloadException;
import site.ycsb.measurements.Measurements;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * One workload measured on several targets (algorithms) in the same window: the client's threads
 * work on one target for a short slice, stop together, then move to the next, round after round.
 *
 * <p>Why: on a shared machine every process's CPU time per operation drifts by 5–15 % over a few
 * seconds (other tenants, frequency), in step. Two cells measured one after the other catch
 * different drifts, so their throughput ratio carries it; slices of a quarter second, alternated,
 * give every target its share of each drift, and the ratio keeps little of it. Each target keeps
 * its own workload instance (its insert keys, its "latest" distribution), its own bindings and its
 * own YCSB measurements, and is charged only for its own slices: their time, the operations begun
 * in them (every thread ends its operation before the slice ends), and the CPU time the named
 * processes spent in them (read at each switch, while no operation is in flight).
 */
final class SlicedCell {
    /** What one target is and what it accumulates over its slices. */
    static final class Target {
        final String name;
        final Properties properties;
        final Set<String> processes;
        final Measurements measurements;
        Workload workload;
        final List<DB> dbs = new ArrayList<>();
        final List<Object> states = new ArrayList<>();
        long[] opsPerThread;
        long nanos;
        final Map<String, Long> ticks = new LinkedHashMap<>();

        /** @param processes the processes whose CPU time is this target's (the proxy's is not the direct target's) */
        Target(String name, Properties properties, Set<String> processes) {
            this.name = name;
            this.properties = properties;
            this.processes = processes;
            this.measurements = new Measurements(properties);
        }

        long operations() {
            long n = 0;
            for (long v : opsPerThread) {
                n += v;
            }
            return n;
        }
    }

    private final List<Target> targets;
    private final int threads;
    private final Session.ProcessCpu cpu;
    private volatile Target current;
    private volatile boolean sliceOver;
    private volatile boolean finished;
    private volatile Throwable failure;

    SlicedCell(List<Target> targets, int threads, Session.ProcessCpu cpu) {
        this.targets = targets;
        this.threads = threads;
        this.cpu = cpu;
    }

    /**
     * Runs rounds of one slice per target, in the targets' order, until every target has had
     * {@code seconds} (a slice lasts {@code sliceSeconds}, or what the target has left, plus the
     * time its threads take to end their operations: slow operations make fewer, longer slices, so
     * the cell's length stays bounded). Returns per target: operations, runtime_ms (its slices
     * only), throughput, cpu_ms and YCSB's measurements.
     */
    Map<String, BsonDocument> run(String dbName, Tracer tracer, double seconds, double sliceSeconds)
            throws Session.SessionException {
        for (Target t : targets) {
            prepare(t, dbName, tracer);
        }
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        CyclicBarrier end = new CyclicBarrier(threads + 1);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread w = new Thread(() -> work(id, start, end), "ycsb-slice-" + i);
            w.setDaemon(true);
            w.start();
            workers.add(w);
        }
        long sliceNanos = (long) (sliceSeconds * 1e9);
        long totalNanos = (long) (seconds * 1e9);
        try {
            rounds:
            while (targets.stream().anyMatch(t -> t.nanos < totalNanos)) {
                for (Target t : targets) {
                    if (failure != null) {
                        break rounds;
                    }
                    if (t.nanos >= totalNanos) {
                        continue;
                    }
                    current = t;
                    sliceOver = false;
                    Map<String, Long> before = cpu.sample();
                    long t0 = System.nanoTime();
                    await(start);
                    long deadline = t0 + Math.min(sliceNanos, totalNanos - t.nanos);
                    for (long left; (left = deadline - System.nanoTime()) > 0; ) {
                        LockSupport.parkNanos(left);
                    }
                    sliceOver = true;
                    await(end);
                    t.nanos += System.nanoTime() - t0;
                    Map<String, Long> after = cpu.sample();
                    after.forEach((name, a) -> {
                        Long b = before.get(name);
                        if (b != null && b >= 0 && a >= b) {
                            t.ticks.merge(name, a - b, Long::sum);
                        }
                    });
                }
            }
            finished = true;
            if (failure == null) {
                await(start);   // releases the workers to see `finished`
            } else {
                start.reset();  // a worker is gone: the others leave on a broken barrier
            }
            for (Thread w : workers) {
                w.join(TimeUnit.SECONDS.toMillis(60));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Session.SessionException("interrupted");
        } finally {
            finished = true;
            start.reset();
            end.reset();
        }
        if (failure != null) {
            throw new Session.SessionException("a client thread failed: " + failure);
        }
        Map<String, BsonDocument> out = new LinkedHashMap<>();
        for (Target t : targets) {
            out.put(t.name, finish(t));
        }
        return out;
    }

    private void prepare(Target t, String dbName, Tracer tracer) throws Session.SessionException {
        // DBWrapper and CoreWorkload take YCSB's measurements singleton when they are made: this
        // target's own, so that its operations are recorded apart from the others'.
        Session.useMeasurements(t.measurements);
        t.workload = Session.newWorkload(t.properties);
        t.opsPerThread = new long[threads];
        for (int i = 0; i < threads; i++) {
            DB db;
            try {
                db = DBFactory.newDB(dbName, t.properties, tracer);
                db.init();
                t.dbs.add(db);
                t.states.add(t.workload.initThread(t.properties, i, threads));
            } catch (UnknownDBException e) {
                throw new Session.SessionException("unknown binding " + dbName);
            } catch (DBException | WorkloadException e) {
                throw new Session.SessionException("target " + t.name + ": " + e.getMessage());
            }
        }
    }

    private void work(int id, CyclicBarrier start, CyclicBarrier end) {
        try {
            while (true) {
                start.await();
                if (finished) {
                    return;
                }
                Target t = current;
                DB db = t.dbs.get(id);
                Object state = t.states.get(id);
                long n = 0;
                while (!sliceOver) {
                    t.workload.doTransaction(db, state);
                    n++;
                }
                t.opsPerThread[id] += n;
                end.await();
            }
        } catch (InterruptedException | BrokenBarrierException e) {
            // the coordinator gave up: nothing more to do
        } catch (RuntimeException e) {
            failure = e;
            sliceOver = true;
            try {
                end.await(1, TimeUnit.SECONDS);
            } catch (InterruptedException | BrokenBarrierException | TimeoutException ignored) {
                // the coordinator sees the failure
            }
        }
    }

    private static void await(CyclicBarrier barrier) throws InterruptedException, Session.SessionException {
        try {
            barrier.await(120, TimeUnit.SECONDS);
        } catch (BrokenBarrierException | TimeoutException e) {
            throw new Session.SessionException("a client thread did not finish its slice within 120 s");
        }
    }

    private BsonDocument finish(Target t) throws Session.SessionException {
        for (DB db : t.dbs) {
            try {
                db.cleanup();
            } catch (DBException e) {
                throw new Session.SessionException("target " + t.name + ": " + e.getMessage());
            }
        }
        try {
            t.workload.cleanup();
        } catch (WorkloadException e) {
            throw new Session.SessionException("workload cleanup: " + e.getMessage());
        }
        BsonDocument cpuMs = new BsonDocument();
        t.ticks.forEach((name, n) -> {
            if (t.processes.contains(name)) {
                cpuMs.append(name, new org.bson.BsonDouble(n * 1000.0 / cpu.ticksPerSecond()));
            }
        });
        CollectingExporter exporter = new CollectingExporter();
        try {
            t.measurements.exportMeasurements(exporter);
        } catch (IOException e) {
            throw new Session.SessionException("measurements: " + e.getMessage());
        }
        long ops = t.operations();
        return new BsonDocument()
                .append("operations", new org.bson.BsonInt64(ops))
                .append("runtime_ms", new org.bson.BsonDouble(t.nanos / 1e6))
                .append("throughput", new org.bson.BsonDouble(t.nanos == 0 ? 0 : ops / (t.nanos / 1e9)))
                .append("cpu_ms", cpuMs)
                .append("measurements", exporter.collected());
    }
}
