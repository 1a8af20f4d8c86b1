package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes the overhead benchmark's phases as CSV and Markdown: throughput per target, each as a
 * ratio to the upstream reached directly and, for encrypted collections, to the proxy on a
 * collection without policy (the cost of the cipher alone).
 */
public final class OverheadReport {
    private OverheadReport() {
    }

    public static double total(List<OverheadBenchmark.Phase> phases, String target, String operation) {
        long ops = 0;
        double secs = 0;
        for (OverheadBenchmark.Phase p : phases) {
            if (p.target().equals(target) && p.operation().equals(operation)) {
                ops += p.ops();
                secs += p.seconds();
            }
        }
        return secs == 0 ? 0 : ops / secs;
    }

    /** The first plain target through a proxy: the no-policy baseline of encrypted targets. */
    private static OverheadBenchmark.Target plainBaseline(List<OverheadBenchmark.Target> targets, String directUri) {
        return targets.stream().filter(t -> !t.encrypted() && !t.uri().equals(directUri)).findFirst().orElse(null);
    }

    private static String ratio(double num, double den) {
        return den == 0 ? "" : String.format(Locale.ROOT, "%.2f", num / den);
    }

    public static String markdown(List<OverheadBenchmark.Phase> phases, List<OverheadBenchmark.Target> targets,
                                  String directUri, int threads, String note) {
        OverheadBenchmark.Target baseline = plainBaseline(targets, directUri);
        String direct = targets.stream().filter(t -> t.uri().equals(directUri)).map(OverheadBenchmark.Target::name)
                .findFirst().orElse(null);
        StringBuilder md = new StringBuilder();
        md.append("# Proxy overhead: direct, through the proxy, and encrypted per suite\n\n");
        md.append(note).append("\n\n");
        md.append(String.format(Locale.ROOT, "%d client threads, Java sync driver, documents of %d fields × %d bytes "
                + "(every field encrypted in the encrypted collections); inserts, then reads by _id.%n%n",
                threads, OverheadBenchmark.FIELDS, OverheadBenchmark.FIELD_LENGTH));
        md.append("| target | insert ops/s | read ops/s | insert / direct | read / direct | insert / no policy | read / no policy |\n"
                + "|---|---:|---:|---:|---:|---:|---:|\n");
        for (OverheadBenchmark.Target t : targets) {
            double ins = total(phases, t.name(), "insert");
            double rd = total(phases, t.name(), "read");
            double dIns = direct == null ? 0 : total(phases, direct, "insert");
            double dRd = direct == null ? 0 : total(phases, direct, "read");
            boolean vsBaseline = t.encrypted() && baseline != null;
            double bIns = vsBaseline ? total(phases, baseline.name(), "insert") : 0;
            double bRd = vsBaseline ? total(phases, baseline.name(), "read") : 0;
            md.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %s | %s | %s | %s |%n", t.name(), ins, rd,
                    ratio(ins, dIns), ratio(rd, dRd), ratio(ins, bIns), ratio(rd, bRd)));
        }
        md.append("\nPhases in run order:\n\n| round | target | operation | ops | seconds | ops/s | mean latency ms |\n"
                + "|---:|---|---|---:|---:|---:|---:|\n");
        for (OverheadBenchmark.Phase p : phases) {
            md.append(String.format(Locale.ROOT, "| %d | %s | %s | %d | %.1f | %.0f | %.2f |%n", p.round(), p.target(),
                    p.operation(), p.ops(), p.seconds(), p.opsPerSecond(), p.meanLatencyMs()));
        }
        return md.toString();
    }

    public static String csv(List<OverheadBenchmark.Phase> phases) {
        StringBuilder csv = new StringBuilder("round,target,operation,ops,seconds,ops_per_second,mean_latency_ms\n");
        for (OverheadBenchmark.Phase p : phases) {
            csv.append(String.format(Locale.ROOT, "%d,%s,%s,%d,%.3f,%.1f,%.3f%n", p.round(), p.target(), p.operation(),
                    p.ops(), p.seconds(), p.opsPerSecond(), p.meanLatencyMs()));
        }
        return csv.toString();
    }

    public static void write(Path dir, String markdown, List<OverheadBenchmark.Phase> phases) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("overhead.md"), markdown);
        Files.writeString(dir.resolve("overhead.csv"), csv(phases));
    }
}
