package dev.fleproxy.bench.crypto;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the cipher benchmarks (JMH) and `openssl speed` in one run and writes
 * results/crypto/report.md and results.csv. Usage: CryptoBenchReport OUT_DIR [full|quick].
 */
public final class CryptoBenchReport {

    /** The OpenSSL cipher to set each suite against (none for LEA: OpenSSL 3.0 has no LEA). */
    record Reference(String evp, boolean legacy) {
    }

    static final Map<String, Reference> OPENSSL = new LinkedHashMap<>();

    static {
        OPENSSL.put("AES_GCM", new Reference("aes-256-gcm", false));
        OPENSSL.put("ARIA_GCM", new Reference("aria-256-gcm", false));
        OPENSSL.put("AES_CBC_HMAC", new Reference("aes-256-cbc", false));
        OPENSSL.put("ARIA_CBC_HMAC", new Reference("aria-256-cbc", false));
        OPENSSL.put("SEED_CBC_HMAC", new Reference("seed-cbc", true));
        OPENSSL.put("TDES_CBC_HMAC", new Reference("des-ede3-cbc", false));
    }

    /** Seed 001, Ubuntu 12.04 column (cycles per byte): key setup, encrypt, decrypt, key+encrypt, key+decrypt. */
    static final Map<String, double[]> PAPER_001 = Map.of(
            "AES", new double[] {8.25, 8.25, 12.38, 17.8, Double.NaN},
            "ARIA", new double[] {11.25, 18.94, 19.12, 31.9, Double.NaN},
            "LEA", new double[] {20.62, 3.75, 5.77, 26.6, Double.NaN});

    static final List<String> SUITES = List.of("AES_GCM", "ARIA_GCM", "LEA_GCM", "AES_CBC_HMAC", "ARIA_CBC_HMAC",
            "SEED_CBC_HMAC", "TDES_CBC_HMAC");

    /**
     * Usage: CryptoBenchReport OUT_DIR [full|quick] [SUITE,SUITE,…]. For each suite and size,
     * OpenSSL is timed right before and right after our JMH cells and its two figures averaged:
     * this machine's speed drifts by tens of percent within minutes, so only measurements taken
     * side by side make a fair ratio.
     */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "results/crypto");
        boolean quick = args.length > 1 && args[1].equals("quick");
        List<String> suiteFilter = args.length > 2 && !args[2].equals("all") ? List.of(args[2].split(",")) : SUITES;
        double ghz = CpuInfo.ghz();
        String cpu = CpuInfo.model();
        int seconds = quick ? 1 : 2;

        List<SuiteRow> suites = new ArrayList<>();
        Map<String, Double> openssl = new LinkedHashMap<>();
        for (String suite : suiteFilter) {
            for (int size : new int[] {100, 1024}) {
                Reference ref = OPENSSL.get(suite);
                double[] before = ref == null ? null : opensslBoth(ref, size, seconds);
                for (RunResult r : new Runner(options(quick)
                        .include(SuiteBenchmark.class.getName())
                        .param("suite", suite)
                        .param("size", String.valueOf(size))
                        .build()).run()) {
                    var params = r.getParams();
                    suites.add(new SuiteRow(suite, size, Boolean.parseBoolean(params.getParam("deterministic")),
                            method(params.getBenchmark()), r.getPrimaryResult().getScore(),
                            r.getPrimaryResult().getScoreError()));
                }
                if (ref != null) {
                    double[] after = opensslBoth(ref, size, seconds);
                    openssl.put(key(suite, size, false), (before[0] + after[0]) / 2);
                    openssl.put(key(suite, size, true), (before[1] + after[1]) / 2);
                }
            }
        }
        List<BlockRow> blocks = new ArrayList<>();
        if (suiteFilter == SUITES) {
            for (RunResult r : new Runner(options(quick).include(BlockCipherBenchmark.class.getName()).build()).run()) {
                var params = r.getParams();
                blocks.add(new BlockRow(params.getParam("algorithm"), method(params.getBenchmark()),
                        r.getPrimaryResult().getScore(), r.getPrimaryResult().getScoreError()));
            }
        }
        Files.createDirectories(out);
        Files.writeString(out.resolve("results.csv"), ReportWriter.csv(suites, blocks, openssl, ghz));
        Files.writeString(out.resolve("report.md"),
                ReportWriter.markdown(suites, blocks, openssl, ghz, cpu, OpenSslSpeed.version(), quick));
        System.out.println("wrote " + out.resolve("report.md") + " and " + out.resolve("results.csv"));
    }

    private static OptionsBuilder options(boolean quick) {
        OptionsBuilder b = new OptionsBuilder();
        b.forks(1)
                .threads(1)
                .warmupIterations(quick ? 1 : 3)
                .warmupTime(TimeValue.milliseconds(quick ? 300 : 1000))
                .measurementIterations(quick ? 2 : 5)
                .measurementTime(TimeValue.milliseconds(quick ? 300 : 1000))
                .shouldFailOnError(true);
        return b;
    }

    private static String method(String benchmark) {
        return benchmark.substring(benchmark.lastIndexOf('.') + 1);
    }

    /** OpenSSL's encrypt and decrypt bytes/s for one cipher and size. */
    private static double[] opensslBoth(Reference ref, int size, int seconds) throws Exception {
        return new double[] {
            OpenSslSpeed.bytesPerSecond(ref.evp(), ref.legacy(), size, false, seconds),
            OpenSslSpeed.bytesPerSecond(ref.evp(), ref.legacy(), size, true, seconds)};
    }

    static String key(String suite, int size, boolean decrypt) {
        return suite + "/" + size + "/" + (decrypt ? "decrypt" : "encrypt");
    }

    record SuiteRow(String suite, int size, boolean deterministic, String op, double opsPerSecond, double error) {
        double mbPerSecond() {
            return opsPerSecond * size / 1e6;
        }

        double cyclesPerByte(double ghz) {
            return ghz * 1e9 / (opsPerSecond * size);
        }
    }

    record BlockRow(String algorithm, String op, double nanos, double error) {
    }

    static String fmt(String f, Object... a) {
        return String.format(Locale.ROOT, f, a);
    }
}
