package dev.fleproxy.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "overhead",
        mixinStandardHelpOptions = true,
        description = "Measures the proxy's cost against the upstream reached directly, and each cipher's.",
        footer = {
            "",
            "N threads insert YCSB-sized documents, then read them by _id, against the",
            "upstream directly (collection bench.plain), through the proxy on bench.plain",
            "(no policy), and through the proxy on each --encrypted collection, in rounds",
            "of alternating order after a warm-up. Each --encrypted collection must be",
            "in the proxy's policy (checked: the upstream must hold envelopes there).",
            "Prints a Markdown table; --out also writes overhead.md and .csv.",
            "",
            "Example: overhead --direct mongodb://127.0.0.1:27017 --proxy mongodb://127.0.0.1:27018 \\",
            "           --encrypted AES-256-GCM=aes --encrypted 3DES-CBC-HMAC=tdes"})
final class OverheadCommand implements Callable<Integer> {

    @Option(names = "--direct", required = true, paramLabel = "URI", description = "connection string of the upstream")
    String direct;

    @Option(names = "--proxy", required = true, paramLabel = "URI", description = "connection string of the proxy")
    String proxy;

    @Option(names = "--encrypted", paramLabel = "LABEL=COLLECTION", mapFallbackValue = "",
            description = "an encrypted collection of database bench to measure, with its label in the report; repeatable")
    Map<String, String> encrypted = new LinkedHashMap<>();

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
        List<OverheadBenchmark.Target> targets = new ArrayList<>();
        targets.add(new OverheadBenchmark.Target("direct", direct, "plain", false));
        targets.add(new OverheadBenchmark.Target("proxy, no policy", proxy, "plain", false));
        encrypted.forEach((label, coll) -> targets.add(new OverheadBenchmark.Target(label, proxy, coll, true)));
        List<OverheadBenchmark.Phase> phases = new OverheadBenchmark(threads, seconds).run(targets, direct, rounds, warmup);
        String md = OverheadReport.markdown(phases, targets, direct, threads, note);
        System.out.println(md);
        if (out != null) {
            OverheadReport.write(out, md, phases);
        }
        return 0;
    }
}
