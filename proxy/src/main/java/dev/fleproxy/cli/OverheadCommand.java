package dev.fleproxy.cli;

import dev.fleproxy.bench.OverheadBenchmark;
import dev.fleproxy.bench.OverheadReport;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "overhead",
        mixinStandardHelpOptions = true,
        description = "Measures the proxy's cost against the upstream reached directly.",
        footer = {
            "",
            "N threads insert YCSB-sized documents, then read them by _id, against the",
            "upstream directly and through the proxy, in alternating rounds after a",
            "warm-up. Prints a Markdown table; --out also writes overhead.md and .csv."})
final class OverheadCommand implements Callable<Integer> {

    @Option(names = "--direct", required = true, paramLabel = "URI", description = "connection string of the upstream")
    String direct;

    @Option(names = "--proxy", required = true, paramLabel = "URI", description = "connection string of the proxy")
    String proxy;

    @Option(names = "--threads", defaultValue = "8", paramLabel = "N", description = "client threads; default ${DEFAULT-VALUE}")
    int threads;

    @Option(names = "--seconds", defaultValue = "10", paramLabel = "S", description = "length of each phase; default ${DEFAULT-VALUE}")
    double seconds;

    @Option(names = "--rounds", defaultValue = "2", paramLabel = "N", description = "rounds of direct+proxy; default ${DEFAULT-VALUE}")
    int rounds;

    @Option(names = "--warmup", defaultValue = "20", paramLabel = "S",
            description = "seconds of unreported load on both targets first (JIT warm-up); default ${DEFAULT-VALUE}")
    double warmup;

    @Option(names = "--out", paramLabel = "DIR", description = "write overhead.md and overhead.csv here")
    Path out;

    @Option(names = "--note", defaultValue = "", paramLabel = "TEXT", description = "a line for the report saying where it ran")
    String note;

    @Override
    public Integer call() throws Exception {
        List<OverheadBenchmark.Phase> phases = new OverheadBenchmark(threads, seconds).run(direct, proxy, rounds, warmup);
        String md = OverheadReport.markdown(phases, threads, note);
        System.out.println(md);
        if (out != null) {
            OverheadReport.write(out, phases, threads, note);
        }
        return 0;
    }
}
