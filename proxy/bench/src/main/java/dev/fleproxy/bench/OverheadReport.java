package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Writes a run as Markdown (overhead.md) and CSV (overhead.csv): the project's targets judged on
 * this run's figures, TLS on the client side beside the cost of field encryption (when the run has
 * tls=true targets), a table per target (throughput; CPU per 1,000 operations of the target's
 * process), allocation per operation from JFR, how it was measured, and every phase in run order.
 */
public final class OverheadReport {
    private OverheadReport() {
    }

    /** Where and how the run happened, for the "how measured" paragraph. */
    public record RunInfo(String commandLine, int threads, double seconds, int rounds, int sideBySideRounds,
                          double warmupSeconds, int processes, double probeSeconds, int nproc, String cpuModel,
                          String javaVersion, List<String> targetJvms, long clkTck, String cryptoSource,
                          List<String> notes) {
    }

    /** Rule 5's side-by-side figures, by the name of each target with metrics that has a twin. */
    public static Map<String, Figures.Paired> paired(List<Target> targets, List<OverheadBenchmark.Phase> phases) {
        Map<String, Figures.Paired> m = new LinkedHashMap<>();
        for (Target t : targets) {
            Target twin = Target.twinOf(targets, t);
            if (twin != null) {
                m.put(t.name(), Figures.paired(t, twin, phases));
            }
        }
        return m;
    }

    public static Map<String, Figures> figures(List<Target> targets, List<OverheadBenchmark.Phase> phases) {
        Map<String, Figures> m = new LinkedHashMap<>();
        for (Target t : targets) {
            m.put(t.name(), Figures.of(t, phases));
        }
        return m;
    }

    static String f0(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.0f", v);
    }

    static String f1(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.1f", v);
    }

    static String f2(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "–" : String.format(Locale.ROOT, "%.2f", v);
    }

    static String kb(double bytes) {
        return Double.isNaN(bytes) ? "–" : String.format(Locale.ROOT, "%.2f", bytes / 1024);
    }

    /** "median (min–max)", or the value alone for one round. */
    static String spread(Figures.Spread s, boolean oneDecimal) {
        if (!s.present()) {
            return "–";
        }
        String median = oneDecimal ? f1(s.median()) : f0(s.median());
        if (s.n() < 2) {
            return median;
        }
        return median + " (" + (oneDecimal ? f1(s.min()) : f0(s.min())) + "–" + (oneDecimal ? f1(s.max()) : f0(s.max())) + ")";
    }

    public static String markdown(List<Target> targets, OverheadBenchmark.Result result, List<Checks.Check> checks,
                                  RunInfo info) {
        Map<String, Figures> figures = figures(targets, result.phases());
        StringBuilder md = new StringBuilder();
        md.append("# Proxy overhead: CPU and allocation per operation, against a byte relay\n\n");
        for (String note : info.notes()) {
            md.append(note).append("\n\n");
        }
        md.append(String.format(Locale.ROOT, "%d client threads, Java sync driver, documents of %d fields × %d bytes "
                + "(every field encrypted in the encrypted collections); inserts, then reads by _id. \"CPU\" is the "
                + "target process's utime + stime during a phase per 1,000 operations (the relay's or the proxy's, "
                + "not the client's or the backend's); each figure is the median over %d round(s), min–max in "
                + "parentheses. CPU per operation is the figure to read on a shared machine: throughput moves with "
                + "whatever else runs, CPU per operation far less.%n%n",
                info.threads(), OverheadBenchmark.FIELDS, OverheadBenchmark.FIELD_LENGTH, info.rounds()));

        md.append("## The targets\n\n");
        long met = checks.stream().filter(c -> c.verdict() == Checks.Verdict.MET).count();
        long notMet = checks.stream().filter(c -> c.verdict() == Checks.Verdict.NOT_MET).count();
        long none = checks.stream().filter(c -> c.verdict() == Checks.Verdict.NOT_EVALUATED).count();
        long floor = checks.stream().filter(c -> c.verdict() == Checks.Verdict.BELOW_FLOOR).count();
        md.append(String.format(Locale.ROOT, "%d met, %d not met, %d not evaluated%s; every ratio is computed from "
                + "figures of this run.%n%n", met, notMet, none,
                floor == 0 ? "" : ", " + floor + " with a limit below the cipher's own cost (the arithmetic is shown)"));
        rule1and2(md, checks, 1, String.format(Locale.ROOT, "1. Proxy without policy ≤ %.2f × the relay on the same "
                + "transport (CPU ms per 1,000 operations, inserts and reads together)", Checks.PLAIN_OVER_RELAY));
        rule1and2(md, checks, 2, String.format(Locale.ROOT, "2. AES-GCM, all ten fields encrypted, ≤ %.2f × the proxy "
                + "without policy on the same transport (same measure)", Checks.AES_OVER_PLAIN));
        rule3(md, checks, info.cryptoSource());
        cipherAlone(md, result.cipher());
        rule4(md, checks, result.allocations());
        rule5(md, checks, paired(targets, result.phases()), info.sideBySideRounds(), info.threads());

        tls(md, targets, figures);

        md.append("## Per target\n\n| target | kind | transport | insert ops/s | read ops/s | CPU ms/1,000 inserts "
                + "| CPU ms/1,000 reads | CPU ms/1,000 ops (both) |\n|---|---|---|---:|---:|---:|---:|---:|\n");
        for (Target t : targets) {
            Figures f = figures.get(t.name());
            md.append("| ").append(t.name()).append(" | ").append(t.kind().label())
                    .append(t.suite() == null ? "" : " (" + t.suite() + ")").append(t.tls() ? ", TLS" : "").append(t.metrics() ? ", metrics" : "").append(" | ")
                    .append(t.transport() == null ? "" : t.transport()).append(" | ")
                    .append(spread(f.insertOps(), false)).append(" | ").append(spread(f.readOps(), false)).append(" | ")
                    .append(spread(f.cpuInsert(), true)).append(" | ").append(spread(f.cpuRead(), true)).append(" | ")
                    .append(spread(f.cpuBoth(), true)).append(" |\n");
        }
        md.append('\n');

        md.append("## Allocation per operation (JFR)\n\n");
        if (result.allocations().isEmpty()) {
            md.append(result.allocationNote() != null ? "Not measured: " + result.allocationNote() + ".\n\n"
                    : "Not measured (no target chosen for the probe).\n\n");
        } else {
            md.append(String.format(Locale.ROOT, "After the rounds, each chosen target ran insert then read once more "
                    + "(%s s each, not in the figures above) under one JFR recording on its process (`jcmd PID "
                    + "JFR.start` with a settings file enabling only jdk.ObjectAllocationSample, throttle 10,000/s, "
                    + "and jdk.ThreadAllocationStatistics, period 1 s; then `JFR.dump`, `JFR.stop`), after %s s of "
                    + "unreported inserts under the same recording. *Sampled*: the sum of the samples' `weight` inside "
                    + "the phase / its operations; a sample weighs what its thread allocated since its previous sample, "
                    + "so each thread's first sample of the recording (which weighs the thread's whole past) is left "
                    + "out. JFR samples only when a thread takes a new TLAB or allocates outside one, so few samples "
                    + "mean a coarse figure. *Exact*: per thread, the last minus the first `allocated` value of "
                    + "ThreadAllocationStatistics inside the phase, summed over threads, / the operations done between "
                    + "those two periods (the phase's rate × their span). Heap only: Netty's pooled direct buffers are "
                    + "not counted.%n%n", trim(info.probeSeconds()),
                    trim(Math.min(AllocationProbe.LEAD_IN_SECONDS, info.probeSeconds()))));
            md.append("| target | phase | ops | ops/s | sampled KB/op | samples | exact KB/op | span s | note |\n"
                    + "|---|---|---:|---:|---:|---:|---:|---:|---|\n");
            for (AllocationProbe.Allocation a : result.allocations()) {
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %d | %s | %s | %s |%n", a.target(),
                        a.operation(), a.ops(), f0(a.seconds() == 0 ? Double.NaN : a.ops() / a.seconds()),
                        kb(a.sampledBytesPerOp()), a.samples(), kb(a.exactBytesPerOp()), f1(a.exactSpanSeconds()),
                        a.note() == null ? "" : a.note()));
            }
            md.append('\n');
        }

        md.append("## How measured\n\n");
        md.append("`").append(info.commandLine()).append("`\n\n");
        md.append(String.format(Locale.ROOT, "%d client threads; %s s per phase; %d round(s) of insert then read on "
                + "every target, odd rounds in the order above and even rounds reversed, after %s s of unreported "
                + "warm-up (%s); "
                + "%s"
                + "allocation probe phases of %s s after the rounds. CPU from "
                + "/proc/PID/stat (utime + stime, CLK_TCK %d: %.0f ms resolution per reading). Machine: %d cores "
                + "(nproc), %s; benchmark on Java %s; targets' JVMs: %s. Crypto figures (rule 3): %s. The figures "
                + "are from one run on a shared %d-core machine where the client, the backend and every relay and "
                + "proxy compete for the same cores: read them as this run's ratios, not as absolute promises.%n%n",
                info.threads(), trim(info.seconds()), info.rounds(), trim(info.warmupSeconds()),
                info.rounds() == 0 && info.sideBySideRounds() > 0
                        ? "side by side: each target with metrics and its twin loaded at once, the pairs one after another"
                        : "the same share for each of the " + info.processes() + " processes loaded, split over its targets",
                info.sideBySideRounds() == 0 ? "" : info.sideBySideRounds() + " side-by-side round(s) of each target "
                        + "with metrics and its twin (rule 5); ",
                trim(info.probeSeconds()),
                info.clkTck(), 1000.0 / info.clkTck(), info.nproc(), info.cpuModel(), info.javaVersion(),
                info.targetJvms().isEmpty() ? "–" : String.join(", ", info.targetJvms()), info.cryptoSource(),
                info.nproc()));

        md.append("## Phases in run order\n\n| round | target | operation | ops | seconds | ops/s | mean latency ms "
                + "| CPU ms/1,000 ops |\n|---|---|---|---:|---:|---:|---:|---:|\n");
        for (OverheadBenchmark.Phase p : result.phases()) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %.1f | %.0f | %.2f | %s |%n",
                    roundLabel(p), p.target(), p.operation(), p.ops(), p.seconds(),
                    p.opsPerSecond(), p.meanLatencyMs(), f1(p.cpuMsPer1000Ops())));
        }
        return md.toString();
    }

    /**
     * A target reached over TLS and its plaintext twin (same kind, transport and suite; the first
     * such in the order given), null when the run has none.
     */
    public record TlsPair(Target plain, Target tls) {
    }

    /**
     * The TLS targets of the run without policy or encrypted, each with its twin, grouped by
     * transport (in order of first appearance), the proxy without policy first.
     */
    public static List<TlsPair> tlsPairs(List<Target> targets) {
        List<String> transports = new ArrayList<>();
        List<TlsPair> pairs = new ArrayList<>();
        for (Target t : targets) {
            if (!t.tls() || (t.kind() != Target.Kind.PROXY_PLAIN && t.kind() != Target.Kind.ENCRYPTED)) {
                continue;
            }
            if (!transports.contains(t.transport())) {
                transports.add(t.transport());
            }
            Target twin = targets.stream().filter(u -> !u.tls() && !u.metrics() && u.kind() == t.kind()
                    && Objects.equals(u.transport(), t.transport()) && Objects.equals(u.suite(), t.suite()))
                    .findFirst().orElse(null);
            pairs.add(new TlsPair(twin, t));
        }
        pairs.sort(Comparator.comparingInt((TlsPair p) -> transports.indexOf(p.tls().transport()))
                .thenComparingInt(p -> p.tls().kind() == Target.Kind.PROXY_PLAIN ? 0 : 1));
        return pairs;
    }

    /** "+4.2", the sign always shown; "–" when either side is missing. */
    static String diff(double a, double b) {
        double d = a - b;
        return Double.isNaN(d) ? "–" : String.format(Locale.ROOT, "%+.1f", d);
    }

    /** The section "TLS on the client side", when the run has TLS targets without policy or encrypted. */
    private static void tls(StringBuilder md, List<Target> targets, Map<String, Figures> figures) {
        List<TlsPair> pairs = tlsPairs(targets);
        if (pairs.isEmpty()) {
            return;
        }
        md.append("## TLS on the client side\n\n");
        md.append("Targets marked TLS are reached with `tls=true`, the client verifying the proxy's certificate "
                + "and host name (in `make bench-overhead`, a proxy process of its own with the same configuration "
                + "plus a `tls:` listener); each is set beside its plaintext twin (same kind, transport and suite). "
                + "CPU is still the proxy's alone, "
                + "inserts and reads together (CPU ms per 1,000 operations = µs per operation): the client's side "
                + "of TLS is not counted, though on a shared machine it takes cores from every process, which "
                + "throughput shows and CPU per operation does not. The driver keeps its pooled connections open "
                + "(the proxy closes no idle connection by default), so the figures are the cost of TLS records "
                + "(each message encrypted and authenticated in both directions), not of handshakes, which happen "
                + "when a connection opens (in the warm-up, when there is one). *TLS − plaintext* is the difference of the medians, in "
                + "ms per 1,000 operations and as a share of the plaintext figure.\n\n");
        md.append("| transport | policy | listener | target | insert ops/s | read ops/s | CPU ms/1,000 ops (both) "
                + "| TLS − plaintext |\n|---|---|---|---|---:|---:|---:|---:|\n");
        for (TlsPair p : pairs) {
            String policy = p.tls().suite() == null ? "none" : p.tls().suite();
            Figures t = figures.get(p.tls().name());
            String change;
            if (p.plain() == null) {
                change = "– (no plaintext " + (p.tls().suite() == null ? "proxy without policy" : p.tls().suite())
                        + " target on " + p.tls().transport() + ")";
            } else {
                Figures f = figures.get(p.plain().name());
                tlsRow(md, p.plain(), policy, "plaintext", f, "");
                double plain = f.cpuBoth().median();
                double over = t.cpuBoth().median();
                change = diff(over, plain);
                if (!change.equals("–") && plain > 0) {
                    change += String.format(Locale.ROOT, " (%+.0f %%)", (over - plain) / plain * 100);
                }
            }
            tlsRow(md, p.tls(), policy, "TLS", t, change);
        }
        md.append('\n');

        List<TlsPair> encrypted = pairs.stream().filter(p -> p.tls().kind() == Target.Kind.ENCRYPTED).toList();
        List<String> transports = new ArrayList<>();
        pairs.forEach(p -> {
            if (!transports.contains(p.tls().transport())) {
                transports.add(p.tls().transport());
            }
        });
        md.append("### TLS beside field encryption\n\n");
        md.append("CPU ms per 1,000 operations (µs per operation) of the proxy, inserts and reads together, from the "
                + "medians above. *TLS* is a policy's figure over TLS minus the same on the plaintext listener; "
                + "*field encryption* is the suite's figure minus the proxy without policy, both on the plaintext "
                + "listener (every field of the documents encrypted, as target 2 measures it); *both* is the suite "
                + "over TLS minus the proxy without policy on the plaintext listener.\n\n");
        md.append("| transport | suite | TLS, no policy | TLS, with the suite | field encryption (plaintext listener) "
                + "| both: the suite over TLS |\n|---|---|---:|---:|---:|---:|\n");
        for (String transport : transports) {
            double plain = cpu(figures, firstPlain(targets, Target.Kind.PROXY_PLAIN, transport, null));
            double plainTls = pairs.stream().filter(p -> p.tls().kind() == Target.Kind.PROXY_PLAIN
                            && transport.equals(p.tls().transport())).findFirst()
                    .map(p -> cpu(figures, p.tls())).orElse(Double.NaN);
            List<TlsPair> here = encrypted.stream().filter(p -> transport.equals(p.tls().transport())).toList();
            if (here.isEmpty()) {
                md.append(String.format(Locale.ROOT, "| %s | – | %s | – | – | – |%n", transport, diff(plainTls, plain)));
            }
            for (TlsPair p : here) {
                double suite = cpu(figures, p.plain());
                double suiteTls = cpu(figures, p.tls());
                md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", transport, p.tls().suite(),
                        diff(plainTls, plain), diff(suiteTls, suite), diff(suite, plain), diff(suiteTls, plain)));
            }
        }
        md.append('\n');
    }

    private static void tlsRow(StringBuilder md, Target t, String policy, String listener, Figures f, String change) {
        md.append("| ").append(t.transport()).append(" | ").append(policy).append(" | ").append(listener).append(" | ")
                .append(t.name()).append(" | ").append(spread(f.insertOps(), false)).append(" | ")
                .append(spread(f.readOps(), false)).append(" | ").append(spread(f.cpuBoth(), true)).append(" | ")
                .append(change).append(" |\n");
    }

    private static Target firstPlain(List<Target> targets, Target.Kind kind, String transport, String suite) {
        return targets.stream().filter(u -> !u.tls() && !u.metrics() && u.kind() == kind && transport.equals(u.transport())
                && Objects.equals(u.suite(), suite)).findFirst().orElse(null);
    }

    private static double cpu(Map<String, Figures> figures, Target t) {
        return t == null ? Double.NaN : figures.get(t.name()).cpuBoth().median();
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%s", v);
    }

    private static List<Checks.Check> rule(List<Checks.Check> checks, int rule) {
        List<Checks.Check> r = new ArrayList<>();
        for (Checks.Check c : checks) {
            if (c.rule() == rule) {
                r.add(c);
            }
        }
        return r;
    }

    private static void rule1and2(StringBuilder md, List<Checks.Check> checks, int n, String title) {
        List<Checks.Check> r = rule(checks, n);
        if (r.isEmpty()) {
            return;
        }
        md.append("### ").append(title).append("\n\n| target | compared with | its CPU ms/1,000 ops | target's | ratio "
                + "| limit | verdict |\n|---|---|---:|---:|---:|---:|---|\n");
        for (Checks.Check c : r) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | ≤ %s | %s |%n", c.subject(),
                    c.against() == null ? "–" : c.against(), f1(c.baseline()), f1(c.figure()), f2(c.ratio()),
                    f2(n == 1 ? Checks.PLAIN_OVER_RELAY : n == 2 ? Checks.AES_OVER_PLAIN : Checks.METRICS_OVER_OFF),
                    verdict(c)));
        }
        md.append('\n');
    }

    private static void rule3(StringBuilder md, List<Checks.Check> checks, String cryptoSource) {
        List<Checks.Check> r = rule(checks, 3);
        if (r.isEmpty()) {
            return;
        }
        md.append(String.format(Locale.ROOT, "### 3. Each suite ≤ the proxy without policy + %.1f × its cipher's own "
                + "cost when that cost is timed in this run, + %.1f × when it is a stored row (CPU ms per 1,000 "
                + "operations, per phase)%n%n", Checks.IN_RUN_CIPHER_FACTOR, Checks.CIPHER_FACTOR));
        md.append("The cipher's own cost per operation: " + cryptoSource + ". A stored row gives 10 fields × (1 / "
                + "ops_per_s) of its 100-byte random-nonce row (encrypt for inserts, decrypt for reads). *Excess* is "
                + "(target − no policy) in multiples of that cost, so the target is met when it is at most the "
                + "row's factor.\n\n");
        md.append("| target | phase | no policy | cipher alone | from | limit | target's | excess / cipher | verdict |\n"
                + "|---|---|---:|---:|---|---:|---:|---:|---|\n");
        for (Checks.Check c : r) {
            double factor = (c.limit() - c.baseline()) / c.cipherCost(); // the factor additive() applied
            String from = Math.abs(factor - Checks.IN_RUN_CIPHER_FACTOR) < 1e-9 ? "this run" : "stored row";
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s, × %s | %s | %s | %s | %s |%n",
                    c.subject(), c.phase(), f1(c.baseline()), f2(c.cipherCost()), from, f1(factor), f1(c.limit()),
                    f1(c.figure()), f2(c.ratio()), verdict(c)));
        }
        md.append('\n');
    }

    /** The JDK's AES-GCM alone, as the benchmark timed it halfway through each AES_GCM phase. */
    private static void cipherAlone(StringBuilder md, List<CipherProbe.Sample> samples) {
        if (samples.isEmpty()) {
            return;
        }
        Figures.Spread seal = Figures.Spread.of(samples.stream().map(CipherProbe.Sample::sealMsPer1000Ops).toList());
        Figures.Spread open = Figures.Spread.of(samples.stream().map(CipherProbe.Sample::openMsPer1000Ops).toList());
        double sealBytes = CipherProbe.median(samples, CipherProbe.Sample::sealBytesPerOp);
        double openBytes = CipherProbe.median(samples, CipherProbe.Sample::openBytesPerOp);
        md.append(String.format(Locale.ROOT, "#### The JDK's AES-GCM alone, in this run%n%n"
                + "Halfway through every measured phase of an AES_GCM target, under the same load, the benchmark "
                + "times on one of its own threads (thread CPU time) %d × %d operations of %d fields each way: "
                + "each field a %d-byte value, a random 12-byte nonce drawn before the timing, %d bytes of associated data, one Cipher set up by init() per value as the proxy's is; "
                + "the median of %d batches. Median over %d phases: **%.2f** (%.2f–%.2f) ms per 1,000 operations to "
                + "seal, **%.2f** (%.2f–%.2f) to open, that is %.2f and %.2f µs per field. It allocates %s KB per "
                + "operation to seal and %s KB to open (one more batch each way per phase, counted by the JVM).%n%n",
                CipherProbe.BATCHES, CipherProbe.BATCH_OPS, OverheadBenchmark.FIELDS, CipherProbe.VALUE_BYTES,
                CipherProbe.AAD_BYTES, CipherProbe.BATCHES, samples.size(), seal.median(), seal.min(), seal.max(),
                open.median(), open.min(), open.max(), seal.median() / OverheadBenchmark.FIELDS,
                open.median() / OverheadBenchmark.FIELDS,
                f2(sealBytes / 1024), f2(openBytes / 1024)));
        md.append("| round | during | seal ms/1,000 ops | open ms/1,000 ops | seal KB/op | open KB/op |\n"
                + "|---:|---|---:|---:|---:|---:|\n");
        for (CipherProbe.Sample x : samples) {
            md.append(String.format(Locale.ROOT, "| %d | %s | %.2f | %.2f | %s | %s |%n", x.round(), x.during(),
                    x.sealMsPer1000Ops(), x.openMsPer1000Ops(), f2(x.sealBytesPerOp() / 1024),
                    f2(x.openBytesPerOp() / 1024)));
        }
        md.append('\n');
    }

    private static void rule4(StringBuilder md, List<Checks.Check> checks, List<AllocationProbe.Allocation> allocations) {
        List<Checks.Check> r = rule(checks, 4);
        if (r.isEmpty()) {
            return;
        }
        md.append(String.format(Locale.ROOT, "### 4. Allocation on the AES-GCM read path ≤ 10 KB (%,.0f bytes) per "
                + "operation (JFR allocation samples in the target's process; the exact counters beside them as a "
                + "cross-check)%n%n", Checks.ALLOC_LIMIT_BYTES));
        md.append("| target | phase | sampled KB/op | samples | exact KB/op | limit KB/op | verdict |\n"
                + "|---|---|---:|---:|---:|---:|---|\n");
        for (Checks.Check c : r) {
            AllocationProbe.Allocation a = allocations.stream()
                    .filter(x -> x.target().equals(c.subject()) && x.operation().equals(c.phase())).findFirst().orElse(null);
            String v = verdict(c);
            if (a != null && c.verdict() != Checks.Verdict.NOT_EVALUATED && !Double.isNaN(a.exactBytesPerOp())
                    && (a.exactBytesPerOp() <= c.limit()) != (c.verdict() == Checks.Verdict.MET)) {
                v += " (the exact figure says otherwise)";
            }
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", c.subject(), c.phase(),
                    kb(c.figure()), a == null ? "–" : Long.toString(a.samples()),
                    a == null ? "–" : kb(a.exactBytesPerOp()), kb(c.limit()), v));
        }
        md.append('\n');
    }

    /** A phase's round as the tables show it: 1.., s1.. for side-by-side rounds, probe. */
    static String roundLabel(OverheadBenchmark.Phase p) {
        return p.probe() ? "probe" : (p.sideBySide() ? "s" : "") + p.round();
    }

    private static void rule5(StringBuilder md, List<Checks.Check> checks, Map<String, Figures.Paired> paired,
                              int sideBySideRounds, int threads) {
        List<Checks.Check> r = rule(checks, 5);
        if (r.isEmpty()) {
            return;
        }
        md.append(String.format(Locale.ROOT, "### 5. The proxy with its admin listener on (`admin:`), /metrics scraped "
                + "every 5 s, ≤ %.2f × the same proxy without it (same measure)%n%n", Checks.METRICS_OVER_OFF));
        if (sideBySideRounds > 0) {
            md.append(String.format(Locale.ROOT, "Judged on %d side-by-side rounds after the others: in each, the "
                    + "proxy with metrics and its twin each get %d client threads at the same time, inserts then "
                    + "reads, so whatever the machine does in those seconds falls on both alike. The ratio is taken "
                    + "round by round and the median judged (min–max over the rounds beside it); the two CPU "
                    + "figures are each target's median over the same rounds.%n%n", sideBySideRounds, threads));
        }
        md.append("| target | compared with | its CPU ms/1,000 ops | target's | ratio | limit | verdict |\n"
                + "|---|---|---:|---:|---:|---:|---|\n");
        for (Checks.Check c : r) {
            Figures.Paired p = paired.get(c.subject());
            String ratio = f2(c.ratio());
            if (p != null && p.ratio().n() > 1) {
                ratio += " (" + f2(p.ratio().min()) + "–" + f2(p.ratio().max()) + ")";
            }
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | ≤ %s | %s |%n", c.subject(),
                    c.against() == null ? "–" : c.against(), f1(c.baseline()), f1(c.figure()), ratio,
                    f2(Checks.METRICS_OVER_OFF), verdict(c)));
        }
        md.append('\n');
    }

    private static String verdict(Checks.Check c) {
        return switch (c.verdict()) {
            case MET -> "met";
            case NOT_MET -> "**not met**";
            case NOT_EVALUATED -> "not evaluated: " + c.note();
            case BELOW_FLOOR -> "limit below the cipher's own cost: " + c.note();
        };
    }

    public static String csv(List<Target> targets, OverheadBenchmark.Result result) {
        Map<String, Target> byName = new LinkedHashMap<>();
        targets.forEach(t -> byName.put(t.name(), t));
        Map<String, AllocationProbe.Allocation> alloc = new LinkedHashMap<>();
        result.allocations().forEach(a -> alloc.put(a.target() + "/" + a.operation(), a));
        StringBuilder csv = new StringBuilder("round,target,kind,transport,suite,tls,metrics,operation,ops,seconds,ops_per_second,"
                + "mean_latency_ms,cpu_ms,cpu_ms_per_1000_ops,alloc_sampled_bytes_per_op,alloc_exact_bytes_per_op,jit_cpu_ms,"
                + "p50_latency_ms,p99_latency_ms\n");
        for (OverheadBenchmark.Phase p : result.phases()) {
            Target t = byName.get(p.target());
            AllocationProbe.Allocation a = p.probe() ? alloc.get(p.target() + "/" + p.operation()) : null;
            csv.append(String.format(Locale.ROOT, "%s,%s,%s,%s,%s,%s,%s,%s,%d,%.3f,%.1f,%.3f,%s,%s,%s,%s,%s,%s,%s%n",
                    roundLabel(p), csvField(p.target()), t.kind().label(),
                    t.transport() == null ? "" : t.transport(), t.suite() == null ? "" : t.suite(), t.tls(),
                    t.metrics(), p.operation(),
                    p.ops(), p.seconds(), p.opsPerSecond(), p.meanLatencyMs(), num(p.cpuMs(), "%.0f"),
                    num(p.cpuMsPer1000Ops(), "%.3f"), a == null ? "" : num(a.sampledBytesPerOp(), "%.0f"),
                    a == null ? "" : num(a.exactBytesPerOp(), "%.0f"), num(p.jitMs(), "%.0f"),
                    num(p.p50LatencyMs(), "%.3f"), num(p.p99LatencyMs(), "%.3f")));
        }
        return csv.toString();
    }

    private static String num(double v, String format) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, format, v);
    }

    private static String csvField(String s) {
        return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }

    public static void write(Path dir, String markdown, String csv) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("overhead.md"), markdown);
        Files.writeString(dir.resolve("overhead.csv"), csv);
    }
}
