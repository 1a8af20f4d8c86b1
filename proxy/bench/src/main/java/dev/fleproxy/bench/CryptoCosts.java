package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What each cipher costs alone, from {@code results/crypto/results.csv} (written by
 * {@code make bench-crypto}, JMH): the rows table=suite, size_bytes=100, variant=random, with
 * operation encrypt or decrypt. One benchmark operation encrypts (insert) or decrypts (read)
 * {@link OverheadBenchmark#FIELDS} such fields, so the cipher's own cost per operation is
 * FIELDS / ops_per_s.
 */
public final class CryptoCosts {
    private final Map<String, Double> opsPerSecond;
    private final String source;
    /** suite/operation → ms per 1,000 benchmark operations timed in this run ({@link CipherProbe}). */
    private final Map<String, Double> inRun;
    private final String inRunSource;

    private CryptoCosts(Map<String, Double> opsPerSecond, String source) {
        this(opsPerSecond, source, Map.of(), null);
    }

    private CryptoCosts(Map<String, Double> opsPerSecond, String source, Map<String, Double> inRun, String inRunSource) {
        this.opsPerSecond = opsPerSecond;
        this.source = source;
        this.inRun = inRun;
        this.inRunSource = inRunSource;
    }

    /**
     * These figures with one suite's cipher cost timed in this run (ms per 1,000 benchmark
     * operations, to seal and to open) in place of its stored rows.
     */
    public CryptoCosts measuredInRun(String suite, double sealMs, double openMs, String how) {
        Map<String, Double> m = new HashMap<>(inRun);
        m.put(suite + "/encrypt", sealMs);
        m.put(suite + "/decrypt", openMs);
        return new CryptoCosts(opsPerSecond, source, m, how);
    }

    /** Whether this suite's figures were timed in this run, not read from the stored rows. */
    public boolean inRun(String suite) {
        return inRun.containsKey(suite + "/encrypt");
    }

    public static CryptoCosts none(String why) {
        return new CryptoCosts(Map.of(), why);
    }

    public static CryptoCosts load(Path csv) throws IOException {
        return parse(Files.readAllLines(csv), csv.toString());
    }

    public static CryptoCosts parse(List<String> lines, String source) {
        if (lines.isEmpty()) {
            throw new IllegalArgumentException(source + " is empty");
        }
        List<String> header = Arrays.asList(lines.get(0).trim().split(","));
        int table = column(header, "table", source);
        int subject = column(header, "subject", source);
        int size = column(header, "size_bytes", source);
        int variant = column(header, "variant", source);
        int operation = column(header, "operation", source);
        int ops = column(header, "ops_per_s", source);
        Map<String, Double> m = new HashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            if (f.length < header.size() || !f[table].equals("suite") || !f[size].equals("100")
                    || !f[variant].equals("random")) {
                continue;
            }
            try {
                m.put(f[subject] + "/" + f[operation], Double.parseDouble(f[ops]));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(source + ": ops_per_s '" + f[ops] + "' is not a number");
            }
        }
        return new CryptoCosts(m, source);
    }

    private static int column(List<String> header, String name, String source) {
        int i = header.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException(source + " has no column " + name);
        }
        return i;
    }

    /** Where the figures come from, or why there are none. */
    public String source() {
        return inRunSource == null ? source : inRunSource + "; the other suites: " + source;
    }

    /** encrypt for the insert phase, decrypt for the read phase. */
    public static String cipherOperation(String phase) {
        return phase.equals("insert") ? "encrypt" : "decrypt";
    }

    /** Operations per second of one 100-byte field, NaN when the file has no such row. */
    public double fieldOpsPerSecond(String suite, String phase) {
        return opsPerSecond.getOrDefault(suite + "/" + cipherOperation(phase), Double.NaN);
    }

    /** The cipher's own CPU per 1,000 benchmark operations (FIELDS fields each), in ms; NaN when unknown. */
    public double msPer1000Ops(String suite, String phase) {
        Double measured = inRun.get(suite + "/" + cipherOperation(phase));
        return measured != null ? measured : msPer1000Ops(fieldOpsPerSecond(suite, phase));
    }

    /** FIELDS × (1 / ops_per_s) seconds per operation, as ms per 1,000 operations. */
    public static double msPer1000Ops(double fieldOpsPerSecond) {
        return OverheadBenchmark.FIELDS / fieldOpsPerSecond * 1000 * 1000;
    }
}
