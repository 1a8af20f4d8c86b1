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
     * @param round       1.. for measured rounds (and for side-by-side rounds); probe phases carry {@code probe}
     * @param sideBySide  measured at the same time as its twin ({@link #sideBySide}), not in the rounds
     * @param cpuMs       CPU time of the target's process during the phase, NaN when it has none
     * @param jitMs       the part of cpuMs its JIT compiler threads took ({@link ProcStat#jitTicks}), NaN when not read
     * @param p50LatencyMs the median operation's latency (all threads'), NaN when not measured; p99 likewise
     */
    public record Phase(String target, String operation, int round, boolean probe, boolean sideBySide, long ops,
                        double seconds, double meanLatencyMs, double cpuMs, Instant began, Instant ended,
                        double jitMs, double p50LatencyMs, double p99LatencyMs) {
        public Phase(String target, String operation, int round, boolean probe, boolean sideBySide, long ops,
                     double seconds, double meanLatencyMs, double cpuMs, Instant began, Instant ended) {
            this(target, operation, round, probe, sideBySide, ops, seconds, meanLatencyMs, cpuMs, began, ended,
                    Double.NaN, Double.NaN, Double.NaN);
        }

        public double opsPerSecond() {
            return seconds == 0 ? 0 : ops / seconds;
        }

        /** CPU ms per 1,000 operations, NaN when not measured. */
        public double cpuMsPer1000Ops() {
            return ops == 0 ? Double.NaN : cpuMs / ops * 1000;
        }
    }

    /**
     * What a run produced: the phases in run order, the allocation probe's results, and the
     * cipher's own cost timed halfway through each AES_GCM phase (empty without a {@link CipherProbe}).
     */
    public record Result(List<Phase> phases, List<AllocationProbe.Allocation> allocations, String allocationNote,
                         List<CipherProbe.Sample> cipher) {
        public Result(List<Phase> phases, List<AllocationProbe.Allocation> allocations, String allocationNote) {
            this(phases, allocations, allocationNote, List.of());
        }
    }

    private final int threads;
    private final double seconds;
    private final PrintStream progress;
    private final SSLContext tlsContext;
    private CipherProbe cipherProbe;
    /** Where the probe's samples of this run go. */
    private List<CipherProbe.Sample> cipherSamples;

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
     * Times the JDK's AES-GCM alone in this process halfway through every measured phase of an
     * AES_GCM target (after warming it once the warm-up is over): the cipher's own work, measured
     * in the same run and under the same load as what the proxy adds.
     */
    public OverheadBenchmark withCipherProbe(CipherProbe probe) {
        this.cipherProbe = probe;
        return this;
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
        return run(targets, checkTarget, rounds, 0, warmupSeconds, probes, probe, probeSeconds);
    }

    /**
     * As above, with {@code sideBySideRounds} rounds after the others in which each target with
     * metrics and its twin without ({@link Target#twinOf}) run their inserts, then their reads,
     * at the same time.
     */
    public Result run(List<Target> targets, Target checkTarget, int rounds, int sideBySideRounds, double warmupSeconds,
                      Map<Target, Target.Alloc> probes, AllocationProbe probe, double probeSeconds)
            throws InterruptedException {
        List<Phase> phases = new ArrayList<>();
        List<AllocationProbe.Allocation> allocations = new ArrayList<>();
        List<CipherProbe.Sample> cipher = new ArrayList<>();
        cipherSamples = cipher;
        Map<String, MongoClient> clients = new LinkedHashMap<>();
        try {
            MongoClient check = checkTarget == null ? null : client(clients, checkTarget);
            for (Target t : targets) {
                client(clients, t);
            }
            if (warmupSeconds > 0 && rounds == 0) {
                sideBySideWarmup(targets, check, warmupSeconds);
            } else if (warmupSeconds > 0) {
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
            if (cipherProbe != null) {
                cipherProbe.warm(CIPHER_WARMUP_SECONDS);
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
            for (int round = 1; round <= sideBySideRounds; round++) {
                for (List<Target> pair : twins(targets)) {
                    // which one's threads are made and read first alternates: an A/A run (two
                    // proxies without metrics) showed the first ~2 % dearer in a fixed order
                    sideBySide(round % 2 == 1 ? pair : List.of(pair.get(1), pair.get(0)), check, round, seconds, phases);
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
            return new Result(phases, allocations, note, cipher);
        } finally {
            clients.values().forEach(MongoClient::close);
        }
    }

    /** Seconds of unrecorded AES-GCM before the first sample (its JIT compilation). */
    static final double CIPHER_WARMUP_SECONDS = 3;

    /** The cipher probe, on the calling thread, halfway through a measured phase that loads an AES_GCM target. */
    private void measureCipherDuring(List<Target> targets, String operation, int round, boolean probe,
                                     long began, long durationNanos) throws InterruptedException {
        if (cipherProbe == null || probe || round <= 0 || targets.stream().noneMatch(
                t -> t.kind() == Target.Kind.ENCRYPTED && "AES_GCM".equals(t.suite()))) {
            return;
        }
        long wait = began + durationNanos / 2 - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
        CipherProbe.Sample s = cipherProbe.measure(round,
                String.join(" and ", targets.stream().map(Target::name).toList()) + ", " + operation);
        cipherSamples.add(s);
        progress.printf(Locale.ROOT, "overhead: during round %d, %s: the JDK's AES-GCM alone, %.2f ms to seal and "
                + "%.2f ms to open per 1,000 operations (%d fields each)%n", round, s.during(), s.sealMsPer1000Ops(),
                s.openMsPer1000Ops(), FIELDS);
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

    /** Each target with metrics and its twin without ({@link Target#twinOf}), in target order. */
    private static List<List<Target>> twins(List<Target> targets) {
        List<List<Target>> out = new ArrayList<>();
        for (Target m : targets) {
            Target twin = Target.twinOf(targets, m);
            if (m.metrics() && twin != null) {
                out.add(List.of(m, twin));
            }
        }
        return out;
    }

    /**
     * The warm-up of a run of side-by-side rounds only: the same rounds, unreported, sharing
     * warmupSeconds between the pairs of twins. Warmed one process after another (20 s each),
     * the proxies were still compiling in the first measured round: its CPU per operation read
     * twice the later rounds' and its ratio anywhere from 0.72 to 1.39, and the compiler threads
     * took 5 % of a proxy's CPU in the rounds after it. Loaded at once, both twins warm for the
     * whole time, under the load they are then measured with (90 s so, the compilers still took
     * 12-19 % of the first round's CPU and 1-2 % by the third: the phases carry their share).
     */
    private void sideBySideWarmup(List<Target> targets, MongoClient check, double warmupSeconds)
            throws InterruptedException {
        List<List<Target>> pairs = twins(targets);
        progress.printf(Locale.ROOT, "overhead: warm-up, %.1f s side by side for each of %d pairs of twins%n",
                warmupSeconds / pairs.size(), pairs.size());
        for (List<Target> pair : pairs) {
            sideBySide(pair, check, 0, warmupSeconds / pairs.size() / 2, new ArrayList<>());
        }
    }

    /**
     * Insert then read on a group of targets at the same time, each with its own threads and
     * collection: whatever the shared machine does in those seconds falls on all of them alike,
     * so their ratio holds still where figures measured one after another drift apart.
     */
    private void sideBySide(List<Target> group, MongoClient check, int round, double phaseSeconds, List<Phase> phases)
            throws InterruptedException {
        // New clients, so new connections each round: a proxy hands each connection to one of its
        // event loops, and how a run's few busy connections happen to fall on them moved its CPU per
        // operation by a few per cent for as long as they lived (two proxies without metrics
        // differed by up to 5 % run to run with clients kept for the whole run).
        Map<String, MongoClient> fresh = new LinkedHashMap<>();
        try {
            sideBySide(group, fresh, check, round, phaseSeconds, phases);
        } finally {
            fresh.values().forEach(MongoClient::close);
        }
    }

    private void sideBySide(List<Target> group, Map<String, MongoClient> clients, MongoClient check, int round,
                            double phaseSeconds, List<Phase> phases) throws InterruptedException {
        List<MongoCollection<Document>> colls = new ArrayList<>();
        List<AtomicLong> ids = new ArrayList<>();
        for (Target t : group) {
            MongoCollection<Document> coll = client(clients, t).getDatabase(DATABASE).getCollection(t.collection());
            coll.drop();
            colls.add(coll);
            ids.add(new AtomicLong());
        }
        List<Op> inserts = new ArrayList<>();
        for (int i = 0; i < group.size(); i++) {
            inserts.add(inserter(colls.get(i), ids.get(i)));
        }
        report(timedTogether(group, "insert", round, false, true, phaseSeconds, inserts), phases);
        List<Op> reads = new ArrayList<>();
        for (int i = 0; i < group.size(); i++) {
            if (check != null) {
                checkStorage(group.get(i), check);
            }
            reads.add(reader(group.get(i), colls.get(i), ids.get(i).get()));
        }
        report(timedTogether(group, "read", round, false, true, phaseSeconds, reads), phases);
        colls.forEach(MongoCollection::drop);
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
            progress(p);
        }
        return p;
    }

    private void report(List<Phase> done, List<Phase> phases) {
        done.forEach(this::progress);
        phases.addAll(done);
    }

    private void progress(Phase p) {
        progress.printf(Locale.ROOT, "overhead: %s, %s, %s: %.0f ops/s, %s CPU ms/1,000 ops%n",
                p.probe() ? "allocation probe" : (p.sideBySide() ? "side by side " : "round ") + p.round(), p.target(),
                p.operation(), p.opsPerSecond(),
                Double.isNaN(p.cpuMs()) ? "-" : String.format(Locale.ROOT, "%.1f", p.cpuMsPer1000Ops()));
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
        return timedTogether(List.of(target), operation, round, probe, false, phaseSeconds, List.of(op)).get(0);
    }

    /**
     * Runs ops.get(i) on targets.get(i) with this benchmark's threads each, all started at once,
     * for phaseSeconds; the CPU of each target's process is read before the start and after the
     * last thread ends.
     */
    private List<Phase> timedTogether(List<Target> targets, String operation, int round, boolean probe,
                                      boolean sideBySide, double phaseSeconds, List<Op> ops)
            throws InterruptedException {
        int n = targets.size();
        LongAdder[] done = new LongAdder[n];
        LongAdder[] nanos = new LongAdder[n];
        List<List<Latencies>> latencies = new ArrayList<>();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        long durationNanos = (long) (phaseSeconds * 1e9);
        List<Thread> workers = new ArrayList<>();
        long[] began = new long[1];
        for (int k = 0; k < n; k++) {
            done[k] = new LongAdder();
            nanos[k] = new LongAdder();
            Op op = ops.get(k);
            LongAdder count = done[k];
            LongAdder time = nanos[k];
            latencies.add(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                Latencies mine = new Latencies();
                latencies.get(k).add(mine);
                Thread w = new Thread(() -> {
                    try {
                        start.await();
                        while (System.nanoTime() - began[0] < durationNanos && failure.get() == null) {
                            long t0 = System.nanoTime();
                            op.run();
                            long took = System.nanoTime() - t0;
                            time.add(took);
                            mine.add(took);
                            count.increment();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                }, "bench-" + targets.get(k).name() + "-" + t);
                workers.add(w);
                w.start();
            }
        }
        long[] cpuBefore = new long[n];
        long[] jitBefore = new long[n];
        for (int k = 0; k < n; k++) {
            if (targets.get(k).measured()) {
                jitBefore[k] = ProcStat.jitTicks(targets.get(k).pid());
                cpuBefore[k] = ProcStat.cpuTicks(targets.get(k).pid());
            }
        }
        Instant from = Instant.now();
        began[0] = System.nanoTime();
        start.countDown();
        measureCipherDuring(targets, operation, round, probe, began[0], durationNanos);
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - began[0]) / 1e9;
        Instant to = Instant.now();
        List<Phase> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            Target target = targets.get(k);
            double cpuMs = target.measured() ? ProcStat.millis(ProcStat.cpuTicks(target.pid()) - cpuBefore[k])
                    : Double.NaN;
            double jitMs = target.measured() ? ProcStat.millis(ProcStat.jitTicks(target.pid()) - jitBefore[k])
                    : Double.NaN;
            long count = done[k].sum();
            double[] p = Latencies.percentilesMs(latencies.get(k), 0.50, 0.99);
            out.add(new Phase(target.name(), operation, round, probe, sideBySide, count, elapsed,
                    count == 0 ? 0 : nanos[k].sum() / 1e6 / count, cpuMs, from, to, jitMs, p[0], p[1]));
        }
        if (failure.get() != null) {
            String names = String.join(" and ", targets.stream().map(Target::name).toList());
            throw new IllegalStateException(operation + " on " + names + " failed: " + failure.get().getMessage(),
                    failure.get());
        }
        return out;
    }
}
