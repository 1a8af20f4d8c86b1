package dev.fleproxy.bench;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import org.bson.Document;

/**
 * The proxy's cost on the simplest loop: N threads insert YCSB-sized documents (10 fields of
 * 100 bytes) for a fixed time, then read them back by _id, against each target in turn: the
 * backend directly, byte relays, the proxy on a collection without policy, and the proxy on
 * collections encrypted under each suite. Rounds alternate the order so that machine noise hits
 * all alike. Around every phase the CPU time (utime + stime) of the target's process is read, so
 * each phase also gives CPU per operation, the figure that stays stable on a shared machine where
 * throughput does not. After the rounds, an allocation probe may record chosen phases with JFR.
 */
public final class OverheadBenchmark {
    public static final int FIELDS = 10;
    public static final int FIELD_LENGTH = 100;
    public static final String DATABASE = "bench";

    /**
     * One timed phase against one target.
     *
     * @param round  1.. for measured rounds; probe phases carry {@code probe}
     * @param cpuMs  CPU time of the target's process during the phase, NaN when it has none
     */
    public record Phase(String target, String operation, int round, boolean probe, long ops, double seconds,
                        double meanLatencyMs, double cpuMs, Instant began, Instant ended) {
        public double opsPerSecond() {
            return seconds == 0 ? 0 : ops / seconds;
        }

        /** CPU ms per 1,000 operations, NaN when not measured. */
        public double cpuMsPer1000Ops() {
            return ops == 0 ? Double.NaN : cpuMs / ops * 1000;
        }
    }

    /** What a run produced: the phases in run order and the allocation probe's results. */
    public record Result(List<Phase> phases, List<AllocationProbe.Allocation> allocations, String allocationNote) {
    }

    private final int threads;
    private final double seconds;
    private final PrintStream progress;
    private final SSLContext tlsContext;

    public OverheadBenchmark(int threads, double seconds, PrintStream progress) {
        this(threads, seconds, progress, null);
    }

    /**
     * @param tlsContext  what clients of tls=true targets trust (TlsTrust), null for the JVM's
     *                    default trust store
     */
    public OverheadBenchmark(int threads, double seconds, PrintStream progress, SSLContext tlsContext) {
        this.threads = threads;
        this.seconds = seconds;
        this.progress = progress;
        this.tlsContext = tlsContext;
    }

    /**
     * Warms up every process (round 0, not reported: the JIT of the client, relay, proxy and
     * backend JVMs; the same time for each process, split over its targets), then runs rounds
     * of (insert, read) per target, odd rounds in the given order, even rounds reversed; then
     * the allocation probe of the chosen targets under JFR.
     *
     * @param checkTarget  the backend itself (a direct target), to check what each target stored; null to skip
     * @param probes    target → phases to record allocation on (after the rounds, not in the figures)
     */
    public Result run(List<Target> targets, Target checkTarget, int rounds, double warmupSeconds,
                      Map<Target, Target.Alloc> probes, AllocationProbe probe, double probeSeconds)
            throws InterruptedException {
        List<Phase> phases = new ArrayList<>();
        List<AllocationProbe.Allocation> allocations = new ArrayList<>();
        Map<String, MongoClient> clients = new LinkedHashMap<>();
        try {
            MongoClient check = checkTarget == null ? null : client(clients, checkTarget);
            for (Target t : targets) {
                client(clients, t);
            }
            if (warmupSeconds > 0) {
                Map<String, List<Target>> processes = byProcess(targets);
                double perProcess = warmupSeconds / processes.size();
                progress.printf(Locale.ROOT, "overhead: warm-up, %.1f s for each of %d processes%n", perProcess,
                        processes.size());
                for (List<Target> group : processes.values()) {
                    for (Target t : group) {
                        target(t, client(clients, t), check, 0, perProcess / 2 / group.size(), new ArrayList<>());
                    }
                }
            }
            for (int round = 1; round <= rounds; round++) {
                List<Target> order = new ArrayList<>(targets);
                if (round % 2 == 0) {
                    Collections.reverse(order);
                }
                for (Target t : order) {
                    target(t, client(clients, t), check, round, seconds, phases);
                }
            }
            String note = null;
            if (!probes.isEmpty()) {
                note = probe.unavailable();
                if (note == null) {
                    for (Map.Entry<Target, Target.Alloc> e : probes.entrySet()) {
                        allocations.addAll(probeTarget(e.getKey(), e.getValue(), client(clients, e.getKey()), check,
                                probe, probeSeconds, phases));
                    }
                } else {
                    progress.println("overhead: no allocation probe: " + note);
                }
            }
            return new Result(phases, allocations, note);
        } finally {
            clients.values().forEach(MongoClient::close);
        }
    }

    /**
     * Targets grouped by the process they load: by pid, else (direct) by URI. The warm-up gives
     * every process the same time whatever the number of its targets, since what it warms is the
     * JIT of that process (whose compilations count in its CPU if they happen in a measured phase).
     */
    static Map<String, List<Target>> byProcess(List<Target> targets) {
        Map<String, List<Target>> m = new LinkedHashMap<>();
        for (Target t : targets) {
            m.computeIfAbsent(t.measured() ? "pid " + t.pid() : t.uri(), k -> new ArrayList<>()).add(t);
        }
        return m;
    }

    /** Insert then read on one target. */
    private void target(Target t, MongoClient client, MongoClient check, int round, double phaseSeconds,
                        List<Phase> phases) throws InterruptedException {
        MongoCollection<Document> coll = client.getDatabase(DATABASE).getCollection(t.collection());
        coll.drop();
        AtomicLong nextId = new AtomicLong();
        phases.add(phase(t, "insert", round, false, phaseSeconds, inserter(coll, nextId)));
        if (check != null) {
            checkStorage(t, check);
        }
        phases.add(phase(t, "read", round, false, phaseSeconds, reader(t, coll, nextId.get())));
        coll.drop();
    }

    /**
     * The allocation probe of one target: one JFR recording on its process over a lead-in of
     * inserts (so that every thread of the target has taken an allocation sample before the
     * first window), the insert phase and the read phase; the chosen phases' windows are read
     * from it and kept as probe phases.
     */
    private List<AllocationProbe.Allocation> probeTarget(Target t, Target.Alloc which, MongoClient client,
                                                         MongoClient check, AllocationProbe probe, double phaseSeconds,
                                                         List<Phase> phases) throws InterruptedException {
        MongoCollection<Document> coll = client.getDatabase(DATABASE).getCollection(t.collection());
        coll.drop();
        AtomicLong nextId = new AtomicLong();
        List<Phase> probed = new ArrayList<>();
        probe.start(t);
        try {
            timed(t, "insert", 0, false, Math.min(AllocationProbe.LEAD_IN_SECONDS, phaseSeconds), inserter(coll, nextId));
            if (which.insert()) {
                probed.add(phase(t, "insert", 0, true, phaseSeconds, inserter(coll, nextId)));
            } else {
                timed(t, "insert", 0, true, phaseSeconds, inserter(coll, nextId));
            }
            if (check != null) {
                checkStorage(t, check);
            }
            if (which.read()) {
                probed.add(phase(t, "read", 0, true, phaseSeconds, reader(t, coll, nextId.get())));
            }
        } catch (RuntimeException | InterruptedException e) {
            probe.abandon();
            throw e;
        }
        List<AllocationProbe.Allocation> allocations = probe.finish(probed);
        phases.addAll(probed);
        for (AllocationProbe.Allocation a : allocations) {
            progress.printf(Locale.ROOT, "overhead: allocation probe, %s, %s: %s bytes/op sampled, %s exact%s%n",
                    a.target(), a.operation(), fmt(a.sampledBytesPerOp()), fmt(a.exactBytesPerOp()),
                    a.note() == null ? "" : " (" + a.note() + ")");
        }
        coll.drop();
        return allocations;
    }

    private static String fmt(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.0f", v);
    }

    private static Op inserter(MongoCollection<Document> coll, AtomicLong nextId) {
        return () -> coll.insertOne(document(nextId.getAndIncrement()));
    }

    private static Op reader(Target t, MongoCollection<Document> coll, long inserted) {
        return () -> {
            long id = ThreadLocalRandom.current().nextLong(inserted);
            Document d = coll.find(Filters.eq("_id", id)).first();
            if (d == null || !(d.get("field0") instanceof String)) {
                throw new IllegalStateException("document " + id + " missing or not decrypted: " + t.name());
            }
        };
    }

    private Phase phase(Target t, String operation, int round, boolean probe, double phaseSeconds, Op op)
            throws InterruptedException {
        Phase p = timed(t, operation, round, probe, phaseSeconds, op);
        if (round > 0 || probe) {
            progress.printf(Locale.ROOT, "overhead: %s, %s, %s: %.0f ops/s, %s CPU ms/1,000 ops%n",
                    probe ? "allocation probe" : "round " + round, t.name(), operation, p.opsPerSecond(),
                    Double.isNaN(p.cpuMs()) ? "-" : String.format(Locale.ROOT, "%.1f", p.cpuMsPer1000Ops()));
        }
        return p;
    }

    /** The backend must hold envelopes (binary) in encrypted targets, strings in the others. */
    private static void checkStorage(Target t, MongoClient direct) {
        boolean encrypted = t.kind() == Target.Kind.ENCRYPTED;
        Document stored = direct.getDatabase(DATABASE).getCollection(t.collection()).find().first();
        Object field0 = stored == null ? null : stored.get("field0");
        boolean binary = field0 instanceof org.bson.types.Binary || field0 instanceof byte[];
        if (stored == null || binary != encrypted) {
            throw new IllegalStateException(DATABASE + "." + t.collection() + " for " + t.name() + " should hold "
                    + (encrypted ? "encrypted envelopes (is it in the proxy's policy?)" : "plain strings")
                    + " but holds " + (stored == null ? "nothing" : field0 == null ? "no field0" : field0.getClass().getSimpleName()));
        }
    }

    /** One client per URI and TLS setting, shared by the targets that name them. */
    private MongoClient client(Map<String, MongoClient> clients, Target t) {
        return clients.computeIfAbsent((t.tls() ? "tls " : "") + t.uri(), k -> client(t.uri(), t.tls()));
    }

    /**
     * A client of one URI; with tls, over TLS trusting tlsContext (or the JVM's default trust),
     * the server's host name verified against its certificate (the driver's default).
     */
    private MongoClient client(String uri, boolean tls) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToConnectionPoolSettings(p -> p.maxSize(100));
        if (tls) {
            b.applyToSslSettings(s -> {
                s.enabled(true).invalidHostNameAllowed(false);
                if (tlsContext != null) {
                    s.context(tlsContext);
                }
            });
        }
        return MongoClients.create(b.build());
    }

    static Document document(long id) {
        Document d = new Document("_id", id);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int f = 0; f < FIELDS; f++) {
            char[] value = new char[FIELD_LENGTH];
            for (int i = 0; i < value.length; i++) {
                value[i] = (char) ('a' + r.nextInt(26));
            }
            d.append("field" + f, new String(value));
        }
        return d;
    }

    private interface Op {
        void run();
    }

    private Phase timed(Target target, String operation, int round, boolean probe, double phaseSeconds, Op op)
            throws InterruptedException {
        LongAdder ops = new LongAdder();
        LongAdder nanos = new LongAdder();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        long durationNanos = (long) (phaseSeconds * 1e9);
        List<Thread> workers = new ArrayList<>();
        long[] began = new long[1];
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                    while (System.nanoTime() - began[0] < durationNanos && failure.get() == null) {
                        long t0 = System.nanoTime();
                        op.run();
                        nanos.add(System.nanoTime() - t0);
                        ops.increment();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }, "bench-" + target.name() + "-" + t);
            workers.add(w);
            w.start();
        }
        long cpuBefore = target.measured() ? ProcStat.cpuTicks(target.pid()) : 0;
        Instant from = Instant.now();
        began[0] = System.nanoTime();
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - began[0]) / 1e9;
        Instant to = Instant.now();
        double cpuMs = target.measured() ? ProcStat.millis(ProcStat.cpuTicks(target.pid()) - cpuBefore) : Double.NaN;
        if (failure.get() != null) {
            throw new IllegalStateException(operation + " on " + target.name() + " failed: " + failure.get().getMessage(),
                    failure.get());
        }
        long n = ops.sum();
        return new Phase(target.name(), operation, round, probe, n, elapsed, n == 0 ? 0 : nanos.sum() / 1e6 / n, cpuMs,
                from, to);
    }
}
