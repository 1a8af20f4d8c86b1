package dev.fleproxy.bench.crypto;

import static dev.fleproxy.bench.crypto.CryptoBenchReport.fmt;

import dev.fleproxy.bench.crypto.CryptoBenchReport.BlockRow;
import dev.fleproxy.bench.crypto.CryptoBenchReport.SuiteRow;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;

/** The crypto benchmark's Markdown report and CSV. */
final class ReportWriter {
    static final double AES_GCM_TARGET = 500_000;
    static final double OPENSSL_RATIO_TARGET = 0.7;

    private ReportWriter() {
    }

    static SuiteRow find(List<SuiteRow> rows, String suite, int size, boolean det, String op) {
        for (SuiteRow r : rows) {
            if (r.suite().equals(suite) && r.size() == size && r.deterministic() == det && r.op().equals(op)) {
                return r;
            }
        }
        return null;
    }

    static double blockNanos(List<BlockRow> rows, String alg, String op) {
        for (BlockRow r : rows) {
            if (r.algorithm().equals(alg) && r.op().equals(op)) {
                return r.nanos();
            }
        }
        return Double.NaN;
    }

    static String csv(List<SuiteRow> suites, List<BlockRow> blocks, Map<String, Double> openssl, double ghz) {
        StringBuilder s = new StringBuilder(
                "table,subject,size_bytes,variant,operation,ops_per_s,error_ops_per_s,mb_per_s,cycles_per_byte,"
                        + "openssl_mb_per_s,ratio_to_openssl\n");
        for (SuiteRow r : suites) {
            Double o = r.deterministic() ? null : openssl.get(CryptoBenchReport.key(r.suite(), r.size(),
                    r.op().equals("decrypt")));
            double omb = o == null || o < 0 ? Double.NaN : o / 1e6;
            s.append(fmt("suite,%s,%d,%s,%s,%.0f,%.0f,%.2f,%.2f,%s,%s%n", r.suite(), r.size(),
                    r.deterministic() ? "deterministic" : "random", r.op(), r.opsPerSecond(), r.error(),
                    r.mbPerSecond(), r.cyclesPerByte(ghz), Double.isNaN(omb) ? "" : fmt("%.2f", omb),
                    Double.isNaN(omb) ? "" : fmt("%.3f", r.mbPerSecond() / omb)));
        }
        for (BlockRow r : blocks) {
            s.append(fmt("block_cipher,%s,%d,128-bit key,%s,%.0f,,,%.2f,,%n", r.algorithm(),
                    BlockCipherBenchmark.MESSAGE, r.op(), 1e9 / r.nanos(),
                    r.nanos() * ghz / BlockCipherBenchmark.MESSAGE));
        }
        return s.toString();
    }

    static String markdown(List<SuiteRow> suites, List<BlockRow> blocks, Map<String, Double> openssl, double ghz,
                           String cpu, String opensslVersion, boolean quick) {
        StringBuilder md = new StringBuilder();
        md.append("# What each cipher suite costs\n\n");
        md.append(fmt("Run %s on %s (%.2f GHz nominal; %s), one thread, Java %s, Bouncy Castle %s, %s.%s%n%n",
                LocalDate.now(), cpu, ghz, CpuInfo.relevantFlags(), System.getProperty("java.version"),
                new org.bouncycastle.jce.provider.BouncyCastleProvider().getVersionStr(), opensslVersion,
                quick ? " **Quick mode: short iterations, indicative only.**" : ""));
        md.append("Command: `make bench-crypto` (JMH: 1 fork, 3 × 1 s warm-up, 5 × 1 s measurement per cell). For "
                + "each suite and size, `openssl speed -evp -seconds 2` runs right before and right after our cells "
                + "and the two are averaged: this shared virtual machine's speed drifts by tens of percent within "
                + "minutes, so read the side-by-side ratios rather than the absolute figures. Cycles per byte = "
                + "nanoseconds per byte × the nominal clock above.\n\n");

        md.append("## Per suite: FieldCipher.encrypt / decrypt (envelope included), random variant\n\n");
        md.append("Keys: AES/ARIA/LEA 256-bit, SEED 128-bit, 3DES 192-bit (three keys). OpenSSL is timed on the "
                + "bare cipher mode (no HMAC, no envelope), so the CBC-HMAC ratios include our HMAC-SHA-256.\n\n");
        md.append("| suite | size | encrypt ops/s | MB/s | cycles/B | decrypt ops/s | MB/s | cycles/B "
                + "| OpenSSL enc MB/s | ours / OpenSSL (enc) | OpenSSL dec MB/s | ours / OpenSSL (dec) |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|\n");
        for (String suite : CryptoBenchReport.OPENSSL.keySet().stream().toList()) {
            suiteRows(md, suites, openssl, ghz, suite);
        }
        suiteRows(md, suites, openssl, ghz, "LEA_GCM");

        md.append("\n## Deterministic variants (nonce = HMAC-SHA-256 of header and value)\n\n");
        md.append("| suite | size | encrypt ops/s | vs random | decrypt ops/s | vs random |\n|---|---:|---:|---:|---:|---:|\n");
        for (SuiteRow r : suites) {
            if (r.deterministic() && r.op().equals("encrypt")) {
                SuiteRow rnd = find(suites, r.suite(), r.size(), false, "encrypt");
                if (rnd == null) {
                    continue;
                }
                SuiteRow dec = find(suites, r.suite(), r.size(), true, "decrypt");
                SuiteRow rdec = find(suites, r.suite(), r.size(), false, "decrypt");
                md.append(fmt("| %s | %d | %.0f | %.2f | %.0f | %.2f |%n", r.suite(), r.size(), r.opsPerSecond(),
                        r.opsPerSecond() / rnd.opsPerSecond(), dec.opsPerSecond(),
                        dec.opsPerSecond() / rdec.opsPerSecond()));
            }
        }

        md.append("\n## Targets (issue 3)\n\n");
        SuiteRow e = find(suites, "AES_GCM", 100, false, "encrypt");
        SuiteRow d = find(suites, "AES_GCM", 100, false, "decrypt");
        if (e != null && d != null) {
            double pairs = 1 / (1 / e.opsPerSecond() + 1 / d.opsPerSecond());
            md.append(fmt("- AES-GCM, 100 bytes, one core: encrypt %.0f ops/s and decrypt %.0f ops/s (target ≥ %.0f "
                    + "each: **%s**); as encrypt+decrypt pairs %.0f pairs/s (**%s**)%n", e.opsPerSecond(),
                    d.opsPerSecond(), AES_GCM_TARGET,
                    Math.min(e.opsPerSecond(), d.opsPerSecond()) >= AES_GCM_TARGET ? "met" : "missed", pairs,
                    pairs >= AES_GCM_TARGET ? "met" : "missed"));
        }
        for (String suite : List.of("ARIA_GCM", "ARIA_CBC_HMAC", "SEED_CBC_HMAC", "TDES_CBC_HMAC")) {
            for (String op : List.of("encrypt", "decrypt")) {
                SuiteRow r = find(suites, suite, 1024, false, op);
                if (r == null) {
                    continue;
                }
                double o = openssl.get(CryptoBenchReport.key(suite, 1024, op.equals("decrypt")));
                double ratio = r.mbPerSecond() / (o / 1e6);
                md.append(fmt("- %s %s, 1 KB: %.2f × OpenSSL (target ≥ %.1f): **%s**%n", suite, op, ratio,
                        OPENSSL_RATIO_TARGET, ratio >= OPENSSL_RATIO_TARGET ? "met" : "missed"));
            }
        }

        if (blocks.isEmpty()) {
            return md.toString();
        }
        md.append("\n## The bare block ciphers, as in source paper 001 (cycles per byte, 1 KB, 128-bit key)\n\n");
        md.append("ECB over 1 KB. Key setup is shown in cycles and spread over the 1 KB message. AES is the JDK's "
                + "(AES-NI), ARIA and LEA the engines the suites use. Paper: C reference code, Ubuntu 12.04 column.\n\n");
        md.append("| cipher | key setup (cycles) | key setup /B | encrypt | decrypt | key+encrypt | key+decrypt "
                + "| paper: key setup | encrypt | decrypt | key+encrypt |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String alg : List.of("AES", "ARIA", "LEA")) {
            double ks = blockNanos(blocks, alg, "keySetup") * ghz;
            double[] p = CryptoBenchReport.PAPER_001.get(alg);
            md.append(fmt("| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |%n", alg, ks,
                    ks / BlockCipherBenchmark.MESSAGE, cpb(blocks, alg, "encrypt", ghz),
                    cpb(blocks, alg, "decrypt", ghz), cpb(blocks, alg, "keyAndEncrypt", ghz),
                    cpb(blocks, alg, "keyAndDecrypt", ghz), p[0], p[1], p[2], p[3]));
        }
        return md.toString();
    }

    private static double cpb(List<BlockRow> blocks, String alg, String op, double ghz) {
        return blockNanos(blocks, alg, op) * ghz / BlockCipherBenchmark.MESSAGE;
    }

    private static void suiteRows(StringBuilder md, List<SuiteRow> suites, Map<String, Double> openssl, double ghz,
                                  String suite) {
        for (int size : new int[] {100, 1024}) {
            SuiteRow e = find(suites, suite, size, false, "encrypt");
            SuiteRow d = find(suites, suite, size, false, "decrypt");
            if (e == null || d == null) {
                continue;
            }
            Double oe = openssl.get(CryptoBenchReport.key(suite, size, false));
            Double od = openssl.get(CryptoBenchReport.key(suite, size, true));
            md.append(fmt("| %s | %d | %.0f | %.1f | %.1f | %.0f | %.1f | %.1f | %s | %s | %s | %s |%n", suite, size,
                    e.opsPerSecond(), e.mbPerSecond(), e.cyclesPerByte(ghz), d.opsPerSecond(), d.mbPerSecond(),
                    d.cyclesPerByte(ghz), mb(oe), ratio(e, oe), mb(od), ratio(d, od)));
        }
    }

    private static String mb(Double bytesPerSecond) {
        return bytesPerSecond == null || bytesPerSecond < 0 ? "–" : fmt("%.1f", bytesPerSecond / 1e6);
    }

    private static String ratio(SuiteRow r, Double bytesPerSecond) {
        return bytesPerSecond == null || bytesPerSecond < 0 ? "–" : fmt("%.2f", r.mbPerSecond() / (bytesPerSecond / 1e6));
    }
}
