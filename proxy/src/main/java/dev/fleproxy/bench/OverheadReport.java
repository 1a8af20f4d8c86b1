package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Writes the overhead benchmark's phases as CSV and a short Markdown table of ratios. */
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

    public static String markdown(List<OverheadBenchmark.Phase> phases, int threads, String note) {
        StringBuilder md = new StringBuilder();
        md.append("# Proxy overhead: direct vs through the proxy\n\n");
        md.append(note).append("\n\n");
        md.append(String.format(Locale.ROOT, "%d client threads, Java sync driver, documents of %d fields × %d bytes.%n%n",
                threads, OverheadBenchmark.FIELDS, OverheadBenchmark.FIELD_LENGTH));
        md.append("| operation | direct ops/s | proxy ops/s | proxy / direct |\n|---|---:|---:|---:|\n");
        for (String op : List.of("insert", "read")) {
            double d = total(phases, "direct", op);
            double p = total(phases, "proxy", op);
            md.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.2f |%n", op, d, p, d == 0 ? 0 : p / d));
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

    public static void write(Path dir, List<OverheadBenchmark.Phase> phases, int threads, String note) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("overhead.md"), markdown(phases, threads, note));
        Files.writeString(dir.resolve("overhead.csv"), csv(phases));
    }
}
