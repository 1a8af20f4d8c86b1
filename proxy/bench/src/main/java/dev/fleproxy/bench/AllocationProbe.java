package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Heap allocation per operation of a target's process, with JDK Flight Recorder: {@code jcmd PID
 * JFR.start} with only {@code jdk.ObjectAllocationSample} (throttle 10,000/s) and
 * {@code jdk.ThreadAllocationStatistics} (every second) enabled, a lead-in and the phases,
 * {@code JFR.dump} and {@code JFR.stop}, then the file is read with
 * {@code jdk.jfr.consumer.RecordingFile}. The jcmd is the one of the JDK running this benchmark,
 * else the one on PATH; without one (or without the jdk.jfr module) the probe says so instead.
 *
 * <p>Two figures per phase: the sum of the samples' {@code weight} (what the sample's thread
 * allocated since its previous sample) inside the phase window over the phase's operations,
 * leaving out each thread's first sample of the recording, whose weight is the thread's whole
 * past; and, as a cross-check, the exact counters of ThreadAllocationStatistics: per thread, the
 * last minus the first {@code allocated} value inside the window, summed over threads, over the
 * operations done between those two samples (the phase's rate × their time span).
 */
public final class AllocationProbe {
    /** Seconds of unreported inserts under the recording before the first window. */
    static final double LEAD_IN_SECONDS = 2;
    /** Below this many samples in a window the sampled figure gets a note. */
    static final int FEW_SAMPLES = 30;
    static final String SETTINGS = """
            <?xml version="1.0" encoding="UTF-8"?>
            <configuration version="2.0" label="fle-bench allocation probe">
              <event name="jdk.ObjectAllocationSample">
                <setting name="enabled">true</setting>
                <setting name="throttle">10000/s</setting>
                <setting name="stackTrace">false</setting>
              </event>
              <event name="jdk.ThreadAllocationStatistics">
                <setting name="enabled">true</setting>
                <setting name="period">1 s</setting>
              </event>
            </configuration>
            """;

    /**
     * One probed phase.
     *
     * @param sampledBytesPerOp sum of ObjectAllocationSample weights in the window / ops (NaN if none)
     * @param samples           how many samples that sum has
     * @param exactBytesPerOp   ThreadAllocationStatistics' figure (NaN when the window held fewer than two periods)
     * @param note              why a figure is missing, or null
     */
    public record Allocation(String target, String operation, long ops, double seconds, double sampledBytesPerOp,
                             long samples, double exactBytesPerOp, double exactSpanSeconds, String note) {
    }

    /** One jdk.ThreadAllocationStatistics value. */
    public record ThreadSample(long thread, Instant time, long allocated) {
    }

    private final Path jcmd;
    private final String unavailable;
    private Path dir;
    private Target current;
    private String recording;
    private String failure;
    private int count;

    private AllocationProbe(Path jcmd, String unavailable) {
        this.jcmd = jcmd;
        this.unavailable = unavailable;
    }

    /** Finds jcmd next to the java running this benchmark, else on PATH, and checks for jdk.jfr. */
    public static AllocationProbe create() {
        if (ModuleLayer.boot().findModule("jdk.jfr").isEmpty()) {
            return new AllocationProbe(null, "this JVM has no jdk.jfr module to read recordings with");
        }
        Path jcmd = ProcessHandle.current().info().command()
                .map(java -> Path.of(java).resolveSibling("jcmd"))
                .filter(Files::isExecutable)
                .orElse(null);
        if (jcmd == null) {
            for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
                if (!d.isEmpty() && Files.isExecutable(Path.of(d, "jcmd"))) {
                    jcmd = Path.of(d, "jcmd");
                    break;
                }
            }
        }
        if (jcmd == null) {
            return new AllocationProbe(null, "no jcmd next to this java nor on PATH (a JRE without the JDK tools?)");
        }
        return new AllocationProbe(jcmd, null);
    }

    /** Why the probe cannot run, or null if it can. */
    public String unavailable() {
        return unavailable;
    }

    public Path jcmd() {
        return jcmd;
    }

    /** Starts a recording on the target's process; a failure is kept for the report, not thrown. */
    void start(Target t) {
        current = t;
        recording = null;
        failure = null;
        if (!t.measured()) {
            failure = "no pid= given";
            return;
        }
        try {
            if (dir == null) {
                dir = Files.createTempDirectory("fle-bench-jfr");
                Files.writeString(dir.resolve("allocation.jfc"), SETTINGS);
            }
            String name = "fle-bench-alloc-" + (++count);
            String out = jcmd(t.pid(), "JFR.start", "name=" + name, "settings=" + dir.resolve("allocation.jfc"));
            if (!out.contains("Started recording")) {
                failure = "JFR.start: " + firstLine(out);
                return;
            }
            recording = name;
        } catch (IOException e) {
            failure = "JFR.start: " + e.getMessage();
        }
    }

    /** Dumps and stops the recording, and reads each phase's window from it. */
    List<Allocation> finish(List<OverheadBenchmark.Phase> phases) {
        List<Allocation> results = new ArrayList<>();
        if (recording == null) {
            for (OverheadBenchmark.Phase p : phases) {
                results.add(failed(p, failure));
            }
            return results;
        }
        Path file = dir.resolve(recording + ".jfr");
        try {
            String out = jcmd(current.pid(), "JFR.dump", "name=" + recording, "filename=" + file);
            jcmd(current.pid(), "JFR.stop", "name=" + recording);
            if (!Files.exists(file)) {
                for (OverheadBenchmark.Phase p : phases) {
                    results.add(failed(p, "JFR.dump: " + firstLine(out)));
                }
            } else {
                results.addAll(analyse(read(file), phases));
            }
        } catch (IOException e) {
            for (OverheadBenchmark.Phase p : phases) {
                results.add(failed(p, "JFR: " + e.getMessage()));
            }
        } finally {
            recording = null;
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temp file
            }
        }
        return results;
    }

    /** Removes the settings file and its temporary directory. */
    void cleanUp() {
        if (dir != null) {
            try {
                Files.deleteIfExists(dir.resolve("allocation.jfc"));
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // a temporary directory
            }
            dir = null;
        }
    }

    private static Allocation failed(OverheadBenchmark.Phase p, String why) {
        return new Allocation(p.target(), p.operation(), p.ops(), p.seconds(), Double.NaN, 0, Double.NaN, 0, why);
    }

    /** The run failed: stop the recording if there is one. */
    void abandon() {
        if (recording != null) {
            try {
                jcmd(current.pid(), "JFR.stop", "name=" + recording);
            } catch (IOException ignored) {
                // the run is failing anyway
            }
            recording = null;
        }
    }

    private String jcmd(long pid, String... command) throws IOException {
        List<String> args = new ArrayList<>();
        args.add(jcmd.toString());
        args.add(Long.toString(pid));
        args.addAll(List.of(command));
        Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("jcmd " + pid + " " + command[0] + " did not finish in 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
        if (p.exitValue() != 0) {
            throw new IOException("jcmd " + pid + " " + command[0] + " exited with " + p.exitValue() + ": " + firstLine(out));
        }
        return out;
    }

    private static String firstLine(String out) {
        return out.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.matches("\\d+:"))
                .findFirst().orElse("(no output)");
    }

    /** One jdk.ObjectAllocationSample: its thread, time and weight. */
    public record Sample(long thread, Instant time, long weight) {
    }

    /** The two kinds of events of a recording. */
    public record Events(List<Sample> samples, List<ThreadSample> stats) {
    }

    static Events read(Path file) throws IOException {
        List<Sample> samples = new ArrayList<>();
        List<ThreadSample> stats = new ArrayList<>();
        try (jdk.jfr.consumer.RecordingFile rf = new jdk.jfr.consumer.RecordingFile(file)) {
            while (rf.hasMoreEvents()) {
                jdk.jfr.consumer.RecordedEvent e = rf.readEvent();
                switch (e.getEventType().getName()) {
                    case "jdk.ObjectAllocationSample" ->
                            samples.add(new Sample(threadId(e.getThread()), e.getStartTime(), e.getLong("weight")));
                    case "jdk.ThreadAllocationStatistics" ->
                            stats.add(new ThreadSample(threadId(e.getThread("thread")), e.getStartTime(), e.getLong("allocated")));
                    default -> {
                    }
                }
            }
        }
        return new Events(samples, stats);
    }

    private static long threadId(jdk.jfr.consumer.RecordedThread th) {
        if (th == null) {
            return -1;
        }
        return th.getJavaThreadId() > 0 ? th.getJavaThreadId() : -2 - th.getOSThreadId();
    }

    /** Each phase's figures from the events of the recording that spans them. */
    static List<Allocation> analyse(Events events, List<OverheadBenchmark.Phase> phases) {
        List<Allocation> out = new ArrayList<>();
        for (OverheadBenchmark.Phase p : phases) {
            Sampled s = sampled(events.samples(), p.began(), p.ended());
            List<ThreadSample> inWindow = new ArrayList<>();
            for (ThreadSample t : events.stats()) {
                if (!t.time().isBefore(p.began()) && !t.time().isAfter(p.ended())) {
                    inWindow.add(t);
                }
            }
            Exact exact = exact(inWindow);
            double sampledPerOp = s.samples() == 0 || p.ops() == 0 ? Double.NaN : (double) s.bytes() / p.ops();
            double exactPerOp = exact.spanSeconds() > 0 && p.opsPerSecond() > 0
                    ? exact.bytes() / (p.opsPerSecond() * exact.spanSeconds()) : Double.NaN;
            String note = null;
            if (s.samples() == 0) {
                note = "no allocation sample in the phase";
            } else if (Double.isNaN(exactPerOp)) {
                note = "ThreadAllocationStatistics: fewer than two periods in the phase";
            } else if (s.samples() < FEW_SAMPLES) {
                note = "only " + s.samples() + " sample(s): the sampled figure is coarse, read the exact one";
            }
            out.add(new Allocation(p.target(), p.operation(), p.ops(), p.seconds(), sampledPerOp, s.samples(), exactPerOp,
                    exact.spanSeconds(), note));
        }
        return out;
    }

    /** The weights of the samples inside a window, and how many there are. */
    public record Sampled(long bytes, long samples) {
    }

    /**
     * Sums the weights of the samples inside [from, to]. A sample's weight is what its thread
     * allocated since the thread's previous sample; the first sample of a thread in a recording
     * has no previous one in it and weighs everything the thread allocated before (since it
     * started, possibly hours), so it is left out wherever it falls.
     */
    public static Sampled sampled(List<Sample> samples, Instant from, Instant to) {
        Map<Long, Instant> firstOfThread = new HashMap<>();
        for (Sample s : samples) {
            firstOfThread.merge(s.thread(), s.time(), (a, b) -> a.isBefore(b) ? a : b);
        }
        Map<Long, Boolean> skipped = new HashMap<>();
        long bytes = 0;
        long n = 0;
        for (Sample s : samples) {
            if (s.time().equals(firstOfThread.get(s.thread())) && skipped.putIfAbsent(s.thread(), true) == null) {
                continue;
            }
            if (!s.time().isBefore(from) && !s.time().isAfter(to)) {
                bytes += s.weight();
                n++;
            }
        }
        return new Sampled(bytes, n);
    }

    /** Bytes allocated between the first and the last period inside the window, and that span. */
    public record Exact(long bytes, double spanSeconds) {
    }

    /**
     * Per thread, the last minus the first {@code allocated} value, summed over threads; the span
     * is from the earliest first to the latest last sample (JFR emits every thread's value at
     * the same period boundary, so the threads' spans agree). A thread seen once adds nothing.
     */
    public static Exact exact(List<ThreadSample> samples) {
        Map<Long, ThreadSample> first = new HashMap<>();
        Map<Long, ThreadSample> last = new HashMap<>();
        Comparator<ThreadSample> byTime = Comparator.comparing(ThreadSample::time);
        for (ThreadSample s : samples) {
            first.merge(s.thread(), s, (a, b) -> byTime.compare(a, b) <= 0 ? a : b);
            last.merge(s.thread(), s, (a, b) -> byTime.compare(a, b) >= 0 ? a : b);
        }
        long bytes = 0;
        Instant from = null;
        Instant to = null;
        for (Map.Entry<Long, ThreadSample> e : first.entrySet()) {
            ThreadSample a = e.getValue();
            ThreadSample b = last.get(e.getKey());
            if (!b.time().isAfter(a.time())) {
                continue;
            }
            bytes += b.allocated() - a.allocated();
            from = from == null || a.time().isBefore(from) ? a.time() : from;
            to = to == null || b.time().isAfter(to) ? b.time() : to;
        }
        double span = from == null ? 0 : java.time.Duration.between(from, to).toNanos() / 1e9;
        return new Exact(bytes, span);
    }
}
