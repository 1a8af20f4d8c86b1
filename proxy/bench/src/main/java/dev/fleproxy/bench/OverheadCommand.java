package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "overhead",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "Measures the proxy's CPU and allocation per operation against the backend reached "
                + "directly, a byte relay, and per cipher suite.",
        footer = {
            "",
            "A target is --target KEY=VALUE[,KEY=VALUE]... with the keys:",
            "  kind=direct|relay|proxy-plain|encrypted   what sits in front of the backend",
            "  uri=mongodb://HOST:PORT    where the client connects (may list hosts: only",
            "                 a comma before WORD= starts the next pair)",
            "  pid=N          the relay's or proxy's process: its CPU (utime+stime from",
            "                 /proc/N/stat) is read around every phase; none for direct",
            "  transport=nio|epoll|io_uring   required but for direct: relays, plain",
            "                 proxies and encrypted targets are compared on one transport",
            "  suite=AES_GCM|ARIA_GCM|LEA_GCM|SEED_CBC_HMAC|TDES_CBC_HMAC|AES_CBC_HMAC|",
            "        ARIA_CBC_HMAC    encrypted only: the suite of the collection's key",
            "  collection=NAME  of database bench; default plain (required if encrypted:",
            "                 the proxy's policy must encrypt it, checked through direct)",
            "  name=LABEL     in the report; default e.g. \"relay epoll\", \"proxy epoll, no",
            "                 policy\", \"AES_GCM epoll\"",
            "  alloc=none|insert|read|both   phases the allocation probe records. When",
            "                 no target says, it records the first AES_GCM target's insert",
            "                 and read, and the read of the plain proxy and of the relay",
            "                 on its transport.",
            "  tls=true|false  the client connects over TLS (default false; a uri saying",
            "                 tls=true needs it too). TLS targets are never judged nor",
            "                 a baseline: the report sets each beside its plaintext twin",
            "                 (same kind, transport and suite) and the cost of field",
            "                 encryption. Their client trusts --tls-ca (else the JVM's",
            "                 trust store) and verifies the host name.",
            "  metrics=true|false  the proxy runs its admin listener, scraped while the",
            "                 run lasts (rule 5): judged only against its twin, the first",
            "                 target of its kind, transport and suite without metrics.",
            "",
            "N threads insert YCSB-sized documents (10 fields x 100 bytes) for --seconds,",
            "then read them by _id, on every target in turn, in --rounds of alternating",
            "order after a --warmup. Around each phase the target's CPU time is read.",
            "Targets that share a pid share its CPU and its part of the warm-up.",
            "Then the allocation probe: each chosen phase once more under JFR (jcmd",
            "PID JFR.start, jdk.ObjectAllocationSample and ThreadAllocationStatistics),",
            "bytes per operation from the recording. The report judges the project's",
            "targets on this run's figures: proxy without policy <= 1.05 x relay; AES-GCM",
            "<= 1.15 x proxy without policy; each suite <= no policy + 1.3 x its cipher",
            "alone (--crypto-results); AES-GCM reads allocate <= 10 KB per operation;",
            "a metrics=true target <= 1.03 x its twin without metrics (same kind,",
            "transport and suite), judged on --side-by-side-rounds when given.",
            "Prints Markdown; --out also writes overhead.md and overhead.csv. Progress",
            "goes to stderr. Bad arguments: one line, exit code 2.",
            "",
            "Example: the backend on 27017, a relay (pid 41) on 27019, a proxy (pid 42)",
            "on 27018 whose policy encrypts bench.aes with an AES-256 key:",
            "  B=mongodb://127.0.0.1:27017 R=mongodb://127.0.0.1:27019",
            "  P=mongodb://127.0.0.1:27018,pid=42,transport=epoll",
            "  java -jar fle-bench.jar overhead --target kind=direct,uri=$B \\",
            "    --target kind=relay,uri=$R,pid=41,transport=epoll \\",
            "    --target kind=proxy-plain,uri=$P \\",
            "    --target kind=encrypted,uri=$P,suite=AES_GCM,collection=aes \\",
            "    --seconds 6 --rounds 2 --out results/embedded"})
final class OverheadCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--target", required = true, paramLabel = "SPEC",
            description = "a target (see below); repeatable, measured in the order given")
    List<String> targetSpecs = new ArrayList<>();

    @Option(names = "--threads", defaultValue = "8", paramLabel = "N", description = "client threads; default ${DEFAULT-VALUE}")
    int threads;

    @Option(names = "--seconds", defaultValue = "10", paramLabel = "S", description = "length of each phase; default ${DEFAULT-VALUE}")
    double seconds;

    @Option(names = "--rounds", defaultValue = "2", paramLabel = "N",
            description = "measured rounds (0 with --side-by-side-rounds: only those); default ${DEFAULT-VALUE}")
    int rounds;

    @Option(names = "--side-by-side-rounds", defaultValue = "0", paramLabel = "N",
            description = "rounds after the others in which each metrics=true target and its twin without metrics "
                    + "run at the same time, each with --threads threads; rule 5 then judges the median of their "
                    + "per-round ratios; default ${DEFAULT-VALUE}")
    int sideBySideRounds;

    @Option(names = "--warmup", defaultValue = "20", paramLabel = "S",
            description = "seconds of unreported load first (JIT warm-up), the same share for every process "
                    + "(pid; direct counts as one), split over its targets; default ${DEFAULT-VALUE}")
    double warmup;

    @Option(names = "--alloc-seconds", paramLabel = "S", description = "length of each allocation probe phase; default --seconds")
    Double allocSeconds;

    @Option(names = "--no-alloc", description = "skip the allocation probe")
    boolean noAlloc;

    @Option(names = "--crypto-results", defaultValue = "results/crypto/results.csv", paramLabel = "FILE",
            description = "the ciphers' own speed (make bench-crypto), for target 3; default ${DEFAULT-VALUE}")
    Path cryptoResults;

    @Option(names = "--tls-ca", paramLabel = "FILE",
            description = "PEM certificate(s) the client trusts on tls=true targets (e.g. the KMS's ca.pem, which "
                    + "`kms proxy-tls` issues the proxy's certificate from); default the JVM's trust store")
    Path tlsCa;

    @Option(names = "--out", paramLabel = "DIR", description = "write overhead.md and overhead.csv here")
    Path out;

    @Option(names = "--note", paramLabel = "TEXT", description = "a line for the report saying where it ran; repeatable")
    List<String> notes = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        List<Target> targets;
        SSLContext tlsContext = null;
        try {
            targets = targets();
        } catch (IllegalArgumentException e) {
            System.err.println("fle-bench overhead: " + e.getMessage());
            return 2;
        }
        if (tlsCa != null) {
            try {
                tlsContext = TlsTrust.trusting(tlsCa);
            } catch (IllegalArgumentException e) {
                System.err.println("fle-bench overhead: --tls-ca: " + e.getMessage());
                return 2;
            }
        }
        Target checkTarget = targets.stream().filter(t -> t.kind() == Target.Kind.DIRECT).findFirst().orElse(null);

        CryptoCosts crypto;
        try {
            crypto = CryptoCosts.load(cryptoResults);
        } catch (NoSuchFileException e) {
            crypto = CryptoCosts.none(cryptoResults + " is missing (make bench-crypto writes it)");
        } catch (IOException | IllegalArgumentException e) {
            crypto = CryptoCosts.none(cryptoResults + " unreadable: " + e.getMessage());
        }

        CipherProbe cipherProbe = new CipherProbe();
        Map<Target, Target.Alloc> probes = noAlloc ? Map.of() : probes(targets);
        AllocationProbe probe = AllocationProbe.create();
        double probeSeconds = allocSeconds == null ? seconds : allocSeconds;
        OverheadBenchmark.Result result;
        try {
            result = new OverheadBenchmark(threads, seconds, System.err, tlsContext).withCipherProbe(cipherProbe)
                    .run(targets, checkTarget, rounds, sideBySideRounds, warmup, probes, probe, probeSeconds);
        } finally {
            probe.cleanUp();
        }
        String allocNote = noAlloc ? "--no-alloc" : result.allocationNote();
        result = new OverheadBenchmark.Result(result.phases(), result.allocations(), allocNote, result.cipher());
        if (!result.cipher().isEmpty()) {
            crypto = crypto.measuredInRun("AES_GCM",
                    CipherProbe.median(result.cipher(), CipherProbe.Sample::sealMsPer1000Ops),
                    CipherProbe.median(result.cipher(), CipherProbe.Sample::openMsPer1000Ops),
                    "AES_GCM: the JDK's AES-GCM (" + cipherProbe.provider() + ") timed by this benchmark during "
                            + "each of AES_GCM's phases");
        }

        List<Checks.Check> checks = Checks.evaluate(targets, OverheadReport.figures(targets, result.phases()),
                OverheadReport.paired(targets, result.phases()), crypto,
                result.allocations(), allocNote,
                CipherProbe.median(result.cipher(), CipherProbe.Sample::openBytesPerOp));
        OverheadReport.RunInfo info = new OverheadReport.RunInfo(commandLine(), threads, seconds, rounds,
                sideBySideRounds, warmup,
                OverheadBenchmark.byProcess(targets).size(),
                probeSeconds, Runtime.getRuntime().availableProcessors(), Machine.cpuModel(), Machine.javaVersion(),
                Machine.targetJvms(targets), ProcStat.clkTck(), crypto.source(), notes);
        String md = OverheadReport.markdown(targets, result, checks, info);
        System.out.println(md);
        if (out != null) {
            OverheadReport.write(out, md, OverheadReport.csv(targets, result));
            System.err.println("overhead: wrote " + out.resolve("overhead.md") + " and " + out.resolve("overhead.csv"));
        }
        return 0;
    }

    /** Parses and checks the targets: unique names, live processes, a direct target for the storage check. */
    List<Target> targets() {
        List<Target> targets = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (String s : targetSpecs) {
            Target t;
            try {
                t = Target.parse(s);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--target " + s + ": " + e.getMessage());
            }
            if (!names.add(t.name())) {
                throw new IllegalArgumentException("two targets are named '" + t.name() + "' (give one a name=)");
            }
            if (t.measured()) {
                try {
                    ProcStat.cpuTicks(t.pid());
                } catch (IllegalStateException e) {
                    throw new IllegalArgumentException("target " + t.name() + ": " + e.getMessage());
                }
            }
            targets.add(t);
        }
        if (sideBySideRounds > 0) {
            for (Target t : targets) {
                Target twin = Target.twinOf(targets, t);
                if (twin != null && twin.collection().equals(t.collection())) {
                    throw new IllegalArgumentException("--side-by-side-rounds: " + t.name() + " and its twin " + twin.name()
                            + " both use collection " + t.collection() + "; they run at the same time, so give one "
                            + "a collection= of its own (in the proxy's policy if encrypted)");
                }
            }
        }
        boolean direct = targets.stream().anyMatch(t -> t.kind() == Target.Kind.DIRECT);
        if (!direct && targets.stream().anyMatch(t -> t.kind() == Target.Kind.ENCRYPTED)) {
            throw new IllegalArgumentException("encrypted targets need a kind=direct target: the backend itself, "
                    + "to check that it holds envelopes");
        }
        if (threads < 1 || seconds <= 0 || rounds < 0 || (rounds == 0 && sideBySideRounds == 0) || warmup < 0
                || sideBySideRounds < 0 || (allocSeconds != null && allocSeconds <= 0)) {
            throw new IllegalArgumentException("--threads, --seconds and --alloc-seconds must be positive, --warmup "
                    + "and --side-by-side-rounds not negative, --rounds positive (0 only with side-by-side rounds)");
        }
        return targets;
    }

    /** The phases to probe: what the targets say, else the AES_GCM default. */
    static Map<Target, Target.Alloc> probes(List<Target> targets) {
        Map<Target, Target.Alloc> chosen = new LinkedHashMap<>();
        if (targets.stream().anyMatch(t -> t.alloc() != null)) {
            for (Target t : targets) {
                if (t.alloc() != null && t.alloc() != Target.Alloc.NONE) {
                    chosen.put(t, t.alloc());
                }
            }
            return chosen;
        }
        Target aes = targets.stream()
                .filter(t -> t.kind() == Target.Kind.ENCRYPTED && t.suite().equals("AES_GCM") && t.measured() && !t.tls())
                .findFirst().orElse(null);
        if (aes == null) {
            return chosen;
        }
        chosen.put(aes, Target.Alloc.BOTH);
        for (Target.Kind k : List.of(Target.Kind.PROXY_PLAIN, Target.Kind.RELAY)) {
            targets.stream().filter(t -> t.kind() == k && aes.transport().equals(t.transport()) && t.measured() && !t.tls())
                    .findFirst().ifPresent(t -> chosen.put(t, Target.Alloc.READ));
        }
        return chosen;
    }

    private String commandLine() {
        List<String> args = new ArrayList<>(List.of("java", "-jar", "fle-bench.jar"));
        CommandLine.ParseResult top = spec.root().commandLine().getParseResult();
        args.addAll(top != null ? top.originalArgs() : List.of("overhead"));
        List<String> quoted = new ArrayList<>();
        for (String a : args) {
            quoted.add(a.matches("[\\w@%+=:,./-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
        }
        return String.join(" ", quoted);
    }

    /** The machine, for the "how measured" paragraph. */
    static final class Machine {
        private Machine() {
        }

        static String cpuModel() {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                    if (line.startsWith("model name")) {
                        return line.substring(line.indexOf(':') + 1).trim();
                    }
                }
            } catch (IOException e) {
                // not Linux
            }
            return "CPU model unknown";
        }

        static String javaVersion() {
            return System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.vendor") + ")";
        }

        /** The JVM installation of each target process (from /proc/PID/exe) and its version. */
        static List<String> targetJvms(List<Target> targets) {
            Set<String> jvms = new LinkedHashSet<>();
            for (Target t : targets) {
                if (!t.measured()) {
                    continue;
                }
                try {
                    Path exe = Files.readSymbolicLink(Path.of("/proc", Long.toString(t.pid()), "exe"));
                    Path home = exe.getParent() == null ? null : exe.getParent().getParent();
                    String version = "";
                    if (home != null && Files.exists(home.resolve("release"))) {
                        for (String line : Files.readAllLines(home.resolve("release"))) {
                            if (line.startsWith("JAVA_VERSION=")) {
                                version = " (" + line.substring(13).replace("\"", "") + ")";
                            }
                        }
                    }
                    jvms.add(exe + version);
                } catch (IOException | UnsupportedOperationException e) {
                    jvms.add("pid " + t.pid() + ": unknown");
                }
            }
            return new ArrayList<>(jvms);
        }
    }
}
