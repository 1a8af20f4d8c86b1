package dev.fleproxy.bench.crypto;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
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

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "results/crypto");
        boolean quick = args.length > 1 && args[1].equals("quick");
        double ghz = CpuInfo.ghz();
        String cpu = CpuInfo.model();

        Options opts = new OptionsBuilder()
                .include(SuiteBenchmark.class.getName())
                .include(BlockCipherBenchmark.class.getName())
                .forks(1)
                .threads(1)
                .warmupIterations(quick ? 1 : 3)
                .warmupTime(TimeValue.milliseconds(quick ? 300 : 1000))
                .measurementIterations(quick ? 2 : 5)
                .measurementTime(TimeValue.milliseconds(quick ? 300 : 1000))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opts).run();

        List<SuiteRow> suites = new ArrayList<>();
        List<BlockRow> blocks = new ArrayList<>();
        for (RunResult r : results) {
            var params = r.getParams();
            String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
            double score = r.getPrimaryResult().getScore();
            double error = r.getPrimaryResult().getScoreError();
            if (params.getBenchmark().contains("SuiteBenchmark")) {
                suites.add(new SuiteRow(params.getParam("suite"), Integer.parseInt(params.getParam("size")),
                        Boolean.parseBoolean(params.getParam("deterministic")), method, score, error));
            } else {
                blocks.add(new BlockRow(params.getParam("algorithm"), method, score, error));
            }
        }

        int seconds = quick ? 1 : 3;
        Map<String, Double> openssl = new LinkedHashMap<>();
        for (Map.Entry<String, Reference> e : OPENSSL.entrySet()) {
            for (int size : new int[] {100, 1024}) {
                for (boolean decrypt : new boolean[] {false, true}) {
                    openssl.put(key(e.getKey(), size, decrypt), OpenSslSpeed.bytesPerSecond(
                            e.getValue().evp(), e.getValue().legacy(), size, decrypt, seconds));
                }
            }
        }
        Files.createDirectories(out);
        Files.writeString(out.resolve("results.csv"), ReportWriter.csv(suites, blocks, openssl, ghz));
        Files.writeString(out.resolve("report.md"),
                ReportWriter.markdown(suites, blocks, openssl, ghz, cpu, OpenSslSpeed.version(), quick));
        System.out.println("wrote " + out.resolve("report.md") + " and " + out.resolve("results.csv"));
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
