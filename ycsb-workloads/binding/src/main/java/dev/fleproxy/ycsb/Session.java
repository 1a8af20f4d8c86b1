package dev.fleproxy.ycsb;

import org.apache.htrace.core.HTraceConfiguration;
import org.apache.htrace.core.Tracer;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import site.ycsb.ClientThread;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.DBFactory;
import site.ycsb.UnknownDBException;
import site.ycsb.Workload;
import site.ycsb.WorkloadException;
import site.ycsb.measurements.Measurements;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One algorithm's cells, back to back, in one JVM: load, an unrecorded warm-up, then each cell's
 * measured window, so that no cell measures a cold client (a fresh YCSB JVM spends its first
 * seconds compiling the driver, and short cells mostly measured that).
 *
 * <p>YCSB's own {@code site.ycsb.Client} runs one phase per JVM and has no warm-up; this class
 * drives the same parts (the workload class, {@link ClientThread}, YCSB's measurements through
 * {@code DBWrapper}) phase after phase, and starts each phase's measurements afresh.
 *
 * <p>Input: a plan, a JSON file ({@code java -cp fle-ycsb.jar dev.fleproxy.ycsb.Session plan.json}, or
 * one path per line with {@code --serve}, see {@link #serve}):
 * <pre>
 * { "db": "dev.fleproxy.ycsb.MongoDbClient", "threads": 8, "properties": {...every phase...},
 *   "load": {"workload": FILE, "records": N, "threads": T, "properties": {...}},       (optional)
 *   "warmup": {"workloads": [FILE, ...], "seconds": S},             (optional; S shared by the files)
 *   "cells": [{"name": "a", "workload": FILE, "operations": N, "seconds": S, "properties": {...}}],
 *   "pids": {"proxy": PID, "backend": PID}, "clockTicks": 100 }                         (optional)
 * </pre>
 * A cell ends after {@code operations} operations or {@code seconds} seconds, whichever comes
 * first. Output: one JSON line per phase on stdout, with YCSB's measurements as its exporter
 * names them, the measured window, the operations done and the CPU time (utime + stime, from
 * {@code /proc/PID/stat}) each named process and this client spent in that window.
 *
 * <p>With {@code "targets"}, a session alternates algorithms inside each cell (see {@link SlicedCell}):
 * <pre>
 *   "targets": [{"name": "aes", "properties": {"table": ..., "mongodb.url": ...}, "processes": ["proxy", "backend"]}, ...],
 *   "cells": [{"name": "a", "workload": FILE, "seconds": S, "slices": K}]    (S per target, in K slices each)
 * </pre>
 * the load fills every target's table in turn, the warm-up and each cell run every target in
 * alternating slices, and each phase prints one line per target (with {@code "target"}); a
 * target's CPU figures name only its {@code processes} (and the client).
 *
 * <p>Insert keys: every phase starts its insert sequence where the previous phases left it
 * ({@code recordcount} = records loaded + inserts so far), so a run phase never inserts a key that
 * exists and no upsert is needed; reads and scans choose among keys that exist.
 */
public final class Session {
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private final BsonDocument plan;
    private final PrintStream out;
    private final Tracer tracer = new Tracer.Builder("fle-ycsb-session").conf(HTraceConfiguration.EMPTY).build();
    private final ProcessCpu cpu;
    /** The next key a phase's inserts take: records loaded plus every insert attempted since. */
    private long nextKey;

    Session(BsonDocument plan, PrintStream out) {
        this.plan = plan;
        this.out = out;
        this.cpu = new ProcessCpu(plan.getDocument("pids", new BsonDocument()),
                plan.getNumber("clockTicks", new org.bson.BsonInt32(100)).intValue());
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve(new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8)));
            System.exit(0);
        }
        if (args.length != 1) {
            System.err.println("usage: java -cp fle-ycsb.jar dev.fleproxy.ycsb.Session PLAN.json | --serve");
            System.exit(2);
        }
        try {
            new Session(readPlan(args[0]), System.out).run();
        } catch (SessionException e) {
            System.err.println("session: " + e.getMessage());
            System.exit(1);
        }
        // YCSB's and the driver's non-daemon threads must not keep a finished session alive.
        System.exit(0);
    }

    /**
     * Runs the plan named on each line of input, one after the other, in this one JVM, so that
     * every session after the first meets a client whose JIT has compiled the driver and YCSB (a
     * fresh JVM needs tens of seconds of load for that, and short cells mostly measured it). Each
     * plan's output ends with {"phase": "end"}; a plan that fails prints {"phase": "error"} first
     * and the next plan still runs.
     */
    static void serve(java.io.BufferedReader in) throws IOException {
        String path;
        while ((path = in.readLine()) != null) {
            if (path.isBlank()) {
                continue;
            }
            try {
                new Session(readPlan(path.trim()), System.out).run();
            } catch (SessionException | RuntimeException e) {
                System.out.println(new BsonDocument("phase", new org.bson.BsonString("error"))
                        .append("message", new org.bson.BsonString(String.valueOf(e.getMessage()))).toJson(JSON));
            }
            System.out.println(new BsonDocument("phase", new org.bson.BsonString("end")).toJson(JSON));
            System.out.flush();
        }
    }

    private static BsonDocument readPlan(String path) throws SessionException {
        try {
            return BsonDocument.parse(Files.readString(Path.of(path)));
        } catch (IOException | RuntimeException e) {
            throw new SessionException("cannot read the plan " + path + ": " + e.getMessage());
        }
    }

    void run() throws SessionException {
        Properties common = properties(plan.getDocument("properties", new BsonDocument()));
        String dbName = plan.getString("db").getValue();
        // One open binding instance for the whole session keeps the driver's connection pool (and
        // so the connections the proxy has warmed) across phases; every phase's threads share it.
        Measurements.setProperties(common);
        List<Properties> keeperProperties = new ArrayList<>();
        if (plan.containsKey("targets")) {   // one per target: each names its own URL and table
            for (BsonValue v : plan.getArray("targets")) {
                keeperProperties.add(targetProperties(common, v.asDocument()));
            }
        } else {
            keeperProperties.add(common);
        }
        List<DB> keepers = new ArrayList<>();
        try {
            for (Properties kp : keeperProperties) {
                DB keeper = newDb(dbName, kp);
                keeper.init();
                keepers.add(keeper);
            }
        } catch (DBException e) {
            closeAll(keepers);
            throw new SessionException("the binding did not start: " + e.getMessage());
        }
        try {
            out.println(new BsonDocument("phase", new org.bson.BsonString("start"))
                    .append("writeConcern", new org.bson.BsonString(MongoDbClient.writeConcernName(common)))
                    .toJson(JSON));
            out.flush();
            if (plan.containsKey("targets")) {
                runSliced(dbName, common);
                return;
            }
            if (plan.containsKey("load")) {
                emit("load", "load", load(dbName, common));
                nextKey = plan.getDocument("load").getNumber("records").longValue();
            } else {
                nextKey = plan.getNumber("records").longValue();
            }
            if (plan.containsKey("warmup")) {
                // The warm-up's time is shared by its workloads, so that every code path the cells
                // take (reads, updates, inserts, scans) is compiled before they are measured.
                BsonDocument warm = plan.getDocument("warmup");
                org.bson.BsonArray files = warm.getArray("workloads");
                double seconds = warm.getNumber("seconds").doubleValue() / files.size();
                for (BsonValue file : files) {
                    BsonDocument phase = new BsonDocument("workload", file);
                    Properties p = runProperties(common, phase, Long.MAX_VALUE, nextKey);
                    emit("warmup", Path.of(file.asString().getValue()).getFileName().toString(),
                            runPhase(dbName, p, true, threads(), Long.MAX_VALUE, seconds));
                }
            }
            for (BsonValue v : plan.getArray("cells", new org.bson.BsonArray())) {
                BsonDocument cell = v.asDocument();
                long ops = cell.getNumber("operations", new org.bson.BsonInt64(Long.MAX_VALUE)).longValue();
                double seconds = cell.getNumber("seconds", new org.bson.BsonDouble(0)).doubleValue();
                Properties p = runProperties(common, cell, ops, nextKey);
                Map<String, ProxyHistogram.Series> before = scrapeProxy();
                BsonDocument result = runPhase(dbName, p, true, threads(), ops, seconds);
                proxyAdded(result, before, scrapeProxy(), plan);
                emit("cell", cell.getString("name").getValue(), result);
            }
        } finally {
            closeAll(keepers);
        }
    }

    private static void closeAll(List<DB> dbs) {
        for (DB db : dbs) {
            try {
                db.cleanup();
            } catch (DBException e) {
                System.err.println("session: closing the binding: " + e.getMessage());
            }
        }
    }

    private static Properties targetProperties(Properties common, BsonDocument target) {
        Properties p = new Properties();
        p.putAll(common);
        p.putAll(properties(target.getDocument("properties", new BsonDocument())));
        return p;
    }

    /** A session over several targets: load each, then warm-up and cells in alternating slices. */
    private void runSliced(String dbName, Properties common) throws SessionException {
        List<BsonDocument> targets = new ArrayList<>();
        for (BsonValue v : plan.getArray("targets")) {
            targets.add(v.asDocument());
        }
        Map<String, Long> nextKeys = new java.util.LinkedHashMap<>();
        for (BsonDocument target : targets) {
            String name = target.getString("name").getValue();
            Properties withTarget = targetProperties(common, target);
            if (plan.containsKey("load")) {
                BsonDocument result = load(dbName, withTarget);
                java.util.Set<String> processes = processesOf(target);
                result.getDocument("cpu_ms").keySet().removeIf(k -> !processes.contains(k));
                emit("load", "load", result.append("target", new org.bson.BsonString(name)));
                nextKeys.put(name, plan.getDocument("load").getNumber("records").longValue());
            } else {
                nextKeys.put(name, plan.getNumber("records").longValue());
            }
        }
        if (plan.containsKey("warmup")) {
            BsonDocument warm = plan.getDocument("warmup");
            org.bson.BsonArray files = warm.getArray("workloads");
            double seconds = warm.getNumber("seconds").doubleValue() / files.size() / targets.size();
            for (BsonValue file : files) {
                BsonDocument phase = new BsonDocument("workload", file);
                Map<String, BsonDocument> results = slicedPhase(dbName, common, targets, phase, nextKeys,
                        seconds, sliceSeconds(warm));
                String name = Path.of(file.asString().getValue()).getFileName().toString();
                results.forEach((target, r) -> emit("warmup", name, r.append("target", new org.bson.BsonString(target))));
            }
        }
        for (BsonValue v : plan.getArray("cells", new org.bson.BsonArray())) {
            BsonDocument cell = v.asDocument();
            double seconds = cell.getNumber("seconds", new org.bson.BsonDouble(0)).doubleValue();
            if (seconds <= 0) {
                throw new SessionException("a sliced cell needs seconds > 0");
            }
            double warm = cell.getNumber("warmupSeconds", new org.bson.BsonDouble(0)).doubleValue();
            if (warm > 0) {   // the workload's own code paths, unrecorded, before its window
                slicedPhase(dbName, common, targets, cell, nextKeys, warm, sliceSeconds(cell));
            }
            Map<String, ProxyHistogram.Series> before = scrapeProxy();
            Map<String, BsonDocument> results = slicedPhase(dbName, common, targets, cell, nextKeys,
                    seconds, sliceSeconds(cell));
            Map<String, ProxyHistogram.Series> after = scrapeProxy();
            for (BsonDocument target : targets) {
                proxyAdded(results.get(target.getString("name").getValue()), before, after, target);
            }
            String name = cell.getString("name").getValue();
            results.forEach((target, r) -> emit("cell", name, r.append("target", new org.bson.BsonString(target))));
        }
    }

    /** The proxy's latency histograms now, if the plan names its /metrics ({@code proxyMetrics}); else null. */
    private Map<String, ProxyHistogram.Series> scrapeProxy() {
        return plan.isString("proxyMetrics") ? ProxyHistogram.scrape(plan.getString("proxyMetrics").getValue()) : null;
    }

    /**
     * Adds to a cell's result what the proxy added to its requests during the window ({@code
     * proxy_added}: the histogram's difference for the collection label {@code metricsCollection}
     * of the plan or target names; nothing for a target that bypasses the proxy).
     */
    private static void proxyAdded(BsonDocument result, Map<String, ProxyHistogram.Series> before,
                                   Map<String, ProxyHistogram.Series> after, BsonDocument owner) {
        if (result == null || !owner.isString("metricsCollection")) {
            return;
        }
        BsonDocument h = ProxyHistogram.between(before, after, owner.getString("metricsCollection").getValue());
        if (h != null) {
            result.append("proxy_added", h);
        }
    }

    private static double sliceSeconds(BsonDocument phase) throws SessionException {
        double s = phase.getNumber("sliceSeconds", new org.bson.BsonDouble(0.25)).doubleValue();
        if (s <= 0) {
            throw new SessionException("sliceSeconds must be > 0");
        }
        return s;
    }

    /** The plan's load phase, with these properties (one target's, or the session's). */
    private BsonDocument load(String dbName, Properties properties) throws SessionException {
        BsonDocument load = plan.getDocument("load");
        long records = load.getNumber("records").longValue();
        Properties p = phaseProperties(properties, load);
        p.setProperty("recordcount", Long.toString(records));
        p.setProperty("operationcount", "0");
        int threads = load.getNumber("threads", plan.getNumber("threads")).intValue();
        return runPhase(dbName, p, false, threads, records, 0);
    }

    /** One workload over every target in alternating slices; advances each target's insert keys. */
    private Map<String, BsonDocument> slicedPhase(String dbName, Properties common, List<BsonDocument> targets,
                                                  BsonDocument phase, Map<String, Long> nextKeys,
                                                  double seconds, double sliceSeconds) throws SessionException {
        List<SlicedCell.Target> sliced = new ArrayList<>();
        for (BsonDocument target : targets) {
            String name = target.getString("name").getValue();
            Properties withTarget = targetProperties(common, target);
            Properties p = runProperties(withTarget, phase, Long.MAX_VALUE, nextKeys.get(name));
            sliced.add(new SlicedCell.Target(name, p, processesOf(target)));
        }
        Map<String, BsonDocument> results = new SlicedCell(sliced, threads(), cpu).run(dbName, tracer, seconds, sliceSeconds);
        for (Map.Entry<String, BsonDocument> e : results.entrySet()) {
            long start = nextKeys.get(e.getKey());
            e.getValue().put("records", new org.bson.BsonInt64(start));
            nextKeys.put(e.getKey(), start + insertsAttempted(e.getValue().getDocument("measurements")));
        }
        return results;
    }

    /**
     * The processes whose CPU time is a target's: the client and those it names (not the idle
     * proxy, for direct); every process the plan names when it names none.
     */
    private java.util.Set<String> processesOf(BsonDocument target) {
        java.util.Set<String> processes = new java.util.HashSet<>(List.of("client"));
        if (!target.containsKey("processes")) {
            processes.addAll(plan.getDocument("pids", new BsonDocument()).keySet());
        }
        for (BsonValue n : target.getArray("processes", new org.bson.BsonArray())) {
            processes.add(n.asString().getValue());
        }
        return processes;
    }

    private int threads() {
        return plan.getNumber("threads").intValue();
    }

    /** A run phase's properties; its inserts start at {@code firstKey}. */
    private Properties runProperties(Properties common, BsonDocument phase, long ops, long firstKey)
            throws SessionException {
        Properties p = phaseProperties(common, phase);
        p.setProperty("recordcount", Long.toString(firstKey));
        // CoreWorkload sizes its zipfian key range by operationcount × insert share; a time-bound
        // cell gives the nominal count the plan names (the paper's 100,000 unless told).
        long nominal = phase.getNumber("nominalOperations", new org.bson.BsonInt64(Math.min(ops, 100_000))).longValue();
        p.setProperty("operationcount", Long.toString(nominal));
        return p;
    }

    private Properties phaseProperties(Properties common, BsonDocument phase) throws SessionException {
        Properties p = new Properties();
        String file = phase.getString("workload").getValue();
        try (InputStream in = Files.newInputStream(Path.of(file))) {
            p.load(in);
        } catch (IOException e) {
            throw new SessionException("cannot read workload file " + file + ": " + e.getMessage());
        }
        p.putAll(common);
        p.putAll(properties(phase.getDocument("properties", new BsonDocument())));
        return p;
    }

    /** Runs one phase with fresh measurements; returns what it measured. */
    private BsonDocument runPhase(String dbName, Properties p, boolean transactions, int threads, long ops,
                                  double seconds) throws SessionException {
        Measurements.setProperties(p);
        resetMeasurements();
        Workload workload = newWorkload(p);
        List<ClientThread> clients = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            // Client's split: the remainder goes to the first threads.
            long share = ops == Long.MAX_VALUE ? Integer.MAX_VALUE : ops / threads + (i < ops % threads ? 1 : 0);
            ClientThread t = new ClientThread(newDb(dbName, p), transactions, workload, p,
                    (int) Math.min(Integer.MAX_VALUE, share), -1, done);
            t.setThreadId(i);
            t.setThreadCount(threads);
            clients.add(t);
        }
        List<Thread> running = new ArrayList<>();
        Map<String, Long> before = cpu.sample();
        long t0 = System.nanoTime();
        for (ClientThread c : clients) {
            Thread t = new Thread(c, "ycsb-client");
            t.start();
            running.add(t);
        }
        try {
            if (seconds > 0 && !done.await((long) (seconds * 1e9), TimeUnit.NANOSECONDS)) {
                workload.requestStop();
            }
            for (Thread t : running) {
                t.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SessionException("interrupted");
        }
        long elapsedNs = System.nanoTime() - t0;
        Map<String, Long> after = cpu.sample();
        try {
            workload.cleanup();
        } catch (WorkloadException e) {
            throw new SessionException("workload cleanup: " + e.getMessage());
        }
        long opsDone = clients.stream().mapToLong(ClientThread::getOpsDone).sum();
        BsonDocument result = new BsonDocument()
                .append("records", new org.bson.BsonInt64(transactions ? nextKey : ops))
                .append("operations", new org.bson.BsonInt64(opsDone))
                .append("runtime_ms", new org.bson.BsonDouble(elapsedNs / 1e6))
                .append("throughput", new org.bson.BsonDouble(opsDone / (elapsedNs / 1e9)))
                .append("cpu_ms", cpu.difference(before, after))
                .append("measurements", exportMeasurements());
        if (transactions) {
            nextKey += insertsAttempted(result.getDocument("measurements"));
        }
        return result;
    }

    /**
     * INSERT operations of a phase, whatever they returned: each took a key from the sequence.
     * YCSB's "Operations" counts only those that succeeded; the return codes count them all.
     */
    private static long insertsAttempted(BsonDocument measurements) {
        BsonDocument insert = measurements.getDocument("INSERT", new BsonDocument());
        return insert.entrySet().stream().filter(e -> e.getKey().startsWith("Return="))
                .mapToLong(e -> e.getValue().asNumber().longValue()).sum();
    }

    private BsonDocument exportMeasurements() throws SessionException {
        CollectingExporter exporter = new CollectingExporter();
        try {
            Measurements.getMeasurements().exportMeasurements(exporter);
        } catch (IOException e) {
            throw new SessionException("measurements: " + e.getMessage());
        }
        return exporter.collected();
    }

    private void emit(String phase, String name, BsonDocument result) {
        BsonDocument line = new BsonDocument("phase", new org.bson.BsonString(phase))
                .append("name", new org.bson.BsonString(name));
        line.putAll(result);
        out.println(line.toJson(JSON));
        out.flush();
    }

    /**
     * YCSB keeps one Measurements per JVM; each phase must start from zero, so the singleton is
     * cleared (it is rebuilt from the properties set just before, on first use).
     */
    private static void resetMeasurements() throws SessionException {
        useMeasurements(null);
    }

    /** Makes {@code m} YCSB's measurements singleton (null: a fresh one on first use). */
    static void useMeasurements(Measurements m) throws SessionException {
        try {
            java.lang.reflect.Field singleton = Measurements.class.getDeclaredField("singleton");
            singleton.setAccessible(true);
            synchronized (Measurements.class) {
                singleton.set(null, m);
            }
        } catch (ReflectiveOperationException e) {
            throw new SessionException("this YCSB core's measurements cannot be reset: " + e);
        }
    }

    static Workload newWorkload(Properties p) throws SessionException {
        String name = p.getProperty("workload", "site.ycsb.workloads.CoreWorkload");
        try {
            Workload w = (Workload) Class.forName(name).getDeclaredConstructor().newInstance();
            w.init(p);
            return w;
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new SessionException("workload class " + name + ": " + e);
        } catch (WorkloadException e) {
            throw new SessionException("workload " + name + ": " + e.getMessage());
        }
    }

    private DB newDb(String name, Properties p) throws SessionException {
        try {
            return DBFactory.newDB(name, p, tracer);
        } catch (UnknownDBException e) {
            throw new SessionException("unknown binding " + name);
        }
    }

    private static Properties properties(BsonDocument doc) {
        Properties p = new Properties();
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            BsonValue v = e.getValue();
            p.setProperty(e.getKey(), v.isString() ? v.asString().getValue()
                    : v.isNumber() ? numberText(v) : v.toString());
        }
        return p;
    }

    private static String numberText(BsonValue v) {
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
        }
        return Long.toString(v.asNumber().longValue());
    }

    static final class SessionException extends Exception {
        SessionException(String message) {
            super(message);
        }
    }

    /** CPU time (utime + stime) of named processes and of this JVM, from /proc/PID/stat. */
    static final class ProcessCpu {
        private final Map<String, Long> pids = new java.util.LinkedHashMap<>();
        private final int ticksPerSecond;

        ProcessCpu(BsonDocument named, int ticksPerSecond) {
            for (Map.Entry<String, BsonValue> e : named.entrySet()) {
                pids.put(e.getKey(), e.getValue().asNumber().longValue());
            }
            pids.put("client", ProcessHandle.current().pid());
            this.ticksPerSecond = ticksPerSecond;
        }

        int ticksPerSecond() {
            return ticksPerSecond;
        }

        Map<String, Long> sample() {
            Map<String, Long> ticks = new java.util.LinkedHashMap<>();
            pids.forEach((name, pid) -> ticks.put(name, ticks(pid)));
            return ticks;
        }

        /** Milliseconds per process; a process that could not be read is left out. */
        BsonDocument difference(Map<String, Long> before, Map<String, Long> after) {
            BsonDocument ms = new BsonDocument();
            before.forEach((name, b) -> {
                Long a = after.get(name);
                if (b >= 0 && a != null && a >= b) {
                    ms.append(name, new org.bson.BsonDouble((a - b) * 1000.0 / ticksPerSecond));
                }
            });
            return ms;
        }

        /** utime + stime in clock ticks, or -1 (no /proc, process gone). */
        static long ticks(long pid) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
                // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                return Long.parseLong(f[11]) + Long.parseLong(f[12]);
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }
    }
}
