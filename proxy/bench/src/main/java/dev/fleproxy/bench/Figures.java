package dev.fleproxy.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * A target's figures over the measured rounds: throughput per phase and CPU per 1,000 operations
 * per phase and for both phases together ((CPU of insert + CPU of read) / (inserts + reads)),
 * each as the median of the per-round values (one slow round, a JIT still compiling or a
 * neighbour's burst, does not move it) with their min and max.
 */
public record Figures(Target target, Spread insertOps, Spread readOps, Spread cpuInsert, Spread cpuRead,
                      Spread cpuBoth) {

    /** Median, min and max of per-round values; NaN (n = 0) when there are none. */
    public record Spread(double median, double min, double max, int n) {
        static final Spread NONE = new Spread(Double.NaN, Double.NaN, Double.NaN, 0);

        public static Spread of(List<Double> values) {
            if (values.isEmpty() || values.stream().anyMatch(v -> Double.isNaN(v))) {
                return NONE;
            }
            double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            int n = sorted.length;
            double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            return new Spread(median, sorted[0], sorted[n - 1], n);
        }

        public boolean present() {
            return n > 0;
        }
    }

    /** phase: insert, read or both. */
    public Spread cpu(String phase) {
        return switch (phase) {
            case "insert" -> cpuInsert;
            case "read" -> cpuRead;
            default -> cpuBoth;
        };
    }

    /**
     * Rule 5's figures from the side-by-side rounds of a target and its twin: each one's CPU per
     * 1,000 operations (inserts and reads together), and per round the ratio of the two, which
     * is what is judged: both were measured in the same seconds.
     */
    public record Paired(Spread cpu, Spread twinCpu, Spread ratio) {
    }

    public static Paired paired(Target t, Target twin, List<OverheadBenchmark.Phase> phases) {
        TreeMap<Integer, double[]> rounds = new TreeMap<>(); // round → cpu ms and ops of t, then of twin
        for (OverheadBenchmark.Phase p : phases) {
            int at = p.target().equals(t.name()) ? 0 : p.target().equals(twin.name()) ? 2 : -1;
            if (!p.sideBySide() || at < 0) {
                continue;
            }
            double[] r = rounds.computeIfAbsent(p.round(), k -> new double[4]);
            r[at] += p.cpuMs();
            r[at + 1] += p.ops();
        }
        List<Double> cpu = new ArrayList<>();
        List<Double> twinCpu = new ArrayList<>();
        List<Double> ratio = new ArrayList<>();
        for (double[] r : rounds.values()) {
            if (r[1] > 0 && r[3] > 0) {
                double a = r[0] / r[1] * 1000;
                double b = r[2] / r[3] * 1000;
                cpu.add(a);
                twinCpu.add(b);
                ratio.add(a / b);
            }
        }
        return new Paired(Spread.of(cpu), Spread.of(twinCpu), Spread.of(ratio));
    }

    /** The figures of one target from the measured (not probe, not side-by-side) phases of the run. */
    public static Figures of(Target t, List<OverheadBenchmark.Phase> phases) {
        TreeMap<Integer, OverheadBenchmark.Phase[]> rounds = new TreeMap<>();
        for (OverheadBenchmark.Phase p : phases) {
            if (p.probe() || p.sideBySide() || p.round() < 1 || !p.target().equals(t.name())) {
                continue;
            }
            OverheadBenchmark.Phase[] pair = rounds.computeIfAbsent(p.round(), r -> new OverheadBenchmark.Phase[2]);
            pair[p.operation().equals("insert") ? 0 : 1] = p;
        }
        List<Double> insOps = new ArrayList<>();
        List<Double> rdOps = new ArrayList<>();
        List<Double> cpuIns = new ArrayList<>();
        List<Double> cpuRd = new ArrayList<>();
        List<Double> cpuBoth = new ArrayList<>();
        for (OverheadBenchmark.Phase[] pair : rounds.values()) {
            OverheadBenchmark.Phase ins = pair[0];
            OverheadBenchmark.Phase rd = pair[1];
            if (ins != null) {
                insOps.add(ins.opsPerSecond());
                cpuIns.add(ins.cpuMsPer1000Ops());
            }
            if (rd != null) {
                rdOps.add(rd.opsPerSecond());
                cpuRd.add(rd.cpuMsPer1000Ops());
            }
            if (ins != null && rd != null) {
                long ops = ins.ops() + rd.ops();
                cpuBoth.add(ops == 0 ? Double.NaN : (ins.cpuMs() + rd.cpuMs()) / ops * 1000);
            }
        }
        return new Figures(t, Spread.of(insOps), Spread.of(rdOps), Spread.of(cpuIns), Spread.of(cpuRd), Spread.of(cpuBoth));
    }
}
