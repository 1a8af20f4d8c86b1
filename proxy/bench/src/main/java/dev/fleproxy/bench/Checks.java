package dev.fleproxy.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The project's targets for the proxy's cost, each judged on figures of one run:
 * <ol>
 * <li>the proxy without policy ≤ {@value #PLAIN_OVER_RELAY} × the relay on the same transport
 *     (CPU per operation, insert and read together);</li>
 * <li>AES-GCM with every field encrypted ≤ {@value #AES_OVER_PLAIN} × the proxy without policy on
 *     the same transport (same measure); where the cipher's own work alone is more than that share
 *     of a no-policy operation, no proxy could meet it, and the verdict says so ({@link
 *     Verdict#BELOW_FLOOR}) with the arithmetic instead of a miss: rule 3 judges that cost;</li>
 * <li>every suite ≤ the no-policy figure + a factor × its cipher's own cost, per phase: encrypt
 *     for inserts, decrypt for reads; AES_GCM's cost timed in the same run ({@link CipherProbe},
 *     the JDK's AES-GCM), factor {@value #IN_RUN_CIPHER_FACTOR}; the other suites' from
 *     results/crypto, factor {@value #CIPHER_FACTOR};</li>
 * <li>allocation on the AES-GCM read path ≤ {@value #ALLOC_LIMIT_BYTES} bytes (10 KB) per
 *     operation (JFR's allocation samples); where the JDK's AES-GCM alone allocates more than that
 *     for an operation's fields ({@link CipherProbe}), the verdict says so with the arithmetic
 *     ({@link Verdict#BELOW_FLOOR}).</li>
 * </ol>
 * <li>(5) a proxy with its admin listener on and scraped ({@code metrics=true}) ≤ {@value
 *     #METRICS_OVER_OFF} × its twin without it (same kind, transport and suite; CPU per operation,
 *     inserts and reads together): the median of the per-round ratios of side-by-side rounds, where
 *     there are any, else the ratio of the two targets' medians over the rounds.</li>
 * Targets reached over TLS ({@code tls=true}) are neither judged nor taken as the baseline of a
 * check: the report sets them beside their plaintext twins instead. Targets with metrics are judged
 * by rule 5 only.
 */
public final class Checks {
    public static final double PLAIN_OVER_RELAY = 1.05;
    public static final double AES_OVER_PLAIN = 1.15;
    public static final double CIPHER_FACTOR = 1.3;
    public static final double IN_RUN_CIPHER_FACTOR = 1.5;
    public static final double ALLOC_LIMIT_BYTES = 10 * 1024;
    public static final double METRICS_OVER_OFF = 1.03;

    public enum Verdict {
        MET("met"), NOT_MET("not met"), NOT_EVALUATED("not evaluated"),
        /** Rules 2 and 4: the limit is below what the cipher alone costs or allocates, so no proxy could meet it. */
        BELOW_FLOOR("limit below the cipher's own cost");

        private final String text;

        Verdict(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /**
     * One judged comparison.
     *
     * @param figure     the measured value (CPU ms/1,000 ops, or bytes per operation for rule 4)
     * @param baseline   what it is compared with (NaN for rule 4)
     * @param cipherCost rule 3: the cipher's own ms/1,000 ops (NaN otherwise)
     * @param limit      the largest figure that meets the target
     * @param ratio      rules 1, 2: figure / baseline; rule 3: (figure − baseline) / cipherCost; rule 4: figure / limit
     * @param note       why it was not evaluated, or null
     */
    public record Check(int rule, String subject, String against, String phase, double figure, double baseline,
                        double cipherCost, double limit, double ratio, Verdict verdict, String note) {
    }

    private Checks() {
    }

    static Verdict verdict(double figure, double limit) {
        if (Double.isNaN(figure) || Double.isNaN(limit)) {
            return Verdict.NOT_EVALUATED;
        }
        return figure <= limit ? Verdict.MET : Verdict.NOT_MET;
    }

    /** figure ≤ factor × baseline. */
    public static Check ratio(int rule, String subject, String against, String phase, double figure, double baseline,
                              double factor) {
        double limit = factor * baseline;
        Verdict v = verdict(figure, limit);
        return new Check(rule, subject, against, phase, figure, baseline, Double.NaN, limit, figure / baseline, v,
                v == Verdict.NOT_EVALUATED ? missing(figure, baseline) : null);
    }

    /**
     * The median of per-round ratios ≤ factor: figure and baseline are the two targets' medians,
     * shown beside it; the ratio judged is taken round by round, each from figures of the same seconds.
     */
    public static Check pairedRatio(int rule, String subject, String against, Figures.Paired p, double factor) {
        double ratio = p.ratio().median();
        Verdict v = verdict(ratio, factor);
        return new Check(rule, subject, against, "both", p.cpu().median(), p.twinCpu().median(), Double.NaN,
                factor * p.twinCpu().median(), ratio, v, null);
    }

    /** figure ≤ baseline + factor × cipherCost. */
    public static Check additive(int rule, String subject, String against, String phase, double figure, double baseline,
                                 double cipherCost, double factor) {
        double limit = baseline + factor * cipherCost;
        Verdict v = verdict(figure, limit);
        String note = null;
        if (v == Verdict.NOT_EVALUATED) {
            note = Double.isNaN(cipherCost) ? "no cipher figure in the crypto results" : missing(figure, baseline);
        }
        return new Check(rule, subject, against, phase, figure, baseline, cipherCost, limit,
                (figure - baseline) / cipherCost, v, note);
    }

    /** Rule 3's factor for a suite: {@value #IN_RUN_CIPHER_FACTOR} when its cost was timed in this run. */
    public static double cipherFactor(CryptoCosts crypto, String suite) {
        return crypto.inRun(suite) ? IN_RUN_CIPHER_FACTOR : CIPHER_FACTOR;
    }

    /**
     * Rule 2 where its limit is below the cipher's own work: the cipher alone (inserts and reads
     * together, the mean of its two phases) is more than (factor − 1) of the no-policy figure, so
     * even a proxy that added nothing but the cipher would be over it. Not a miss: the verdict
     * says so and its note gives the arithmetic; rule 3 judges what the suite adds.
     */
    static Check floored(Check c, CryptoCosts crypto, String suite) {
        double cipher = (crypto.msPer1000Ops(suite, "insert") + crypto.msPer1000Ops(suite, "read")) / 2;
        double floor = (c.baseline() + cipher) / c.baseline();
        if (c.verdict() != Verdict.NOT_MET || Double.isNaN(floor) || floor <= AES_OVER_PLAIN) {
            return c;
        }
        double withFactor = (c.baseline() + cipherFactor(crypto, suite) * cipher) / c.baseline();
        String note = String.format(java.util.Locale.ROOT, "the cipher alone is %.1f ms per 1,000 operations, %.0f %% "
                + "of the proxy without policy (%.1f), so a proxy adding nothing but the cipher would be at %.2f, over "
                + "%.2f; rule 3's limit (%.1f × the cipher) is %.2f here", cipher, 100 * cipher / c.baseline(),
                c.baseline(), floor, AES_OVER_PLAIN, cipherFactor(crypto, suite), withFactor);
        return new Check(c.rule(), c.subject(), c.against(), c.phase(), c.figure(), c.baseline(), cipher, c.limit(),
                c.ratio(), Verdict.BELOW_FLOOR, note);
    }

    /** figure ≤ limit. */
    public static Check ceiling(int rule, String subject, String phase, double figure, double limit, String note) {
        Verdict v = verdict(figure, limit);
        return new Check(rule, subject, null, phase, figure, Double.NaN, Double.NaN, limit, figure / limit, v,
                v == Verdict.NOT_EVALUATED ? (note == null ? "no figure" : note) : null);
    }

    private static String missing(double figure, double baseline) {
        return Double.isNaN(figure) ? "no CPU figure (pid= missing?)" : "no CPU figure for the baseline (pid= missing?)";
    }

    /** Every check the targets of a run allow, in rule order, with no side-by-side rounds. */
    public static List<Check> evaluate(List<Target> targets, Map<String, Figures> figures, CryptoCosts crypto,
                                       List<AllocationProbe.Allocation> allocations, String allocationNote) {
        return evaluate(targets, figures, Map.of(), crypto, allocations, allocationNote, Double.NaN);
    }

    /**
     * Rule 4 where the JDK's AES-GCM alone allocates more per read than the limit
     * (cipherBytes, from {@link CipherProbe}): no proxy using it could meet it; the note gives
     * what the cipher allocates and what is left for the proxy's own work.
     */
    static Check flooredAllocation(Check c, double cipherBytes) {
        if (c.verdict() != Verdict.NOT_MET || Double.isNaN(cipherBytes) || cipherBytes <= c.limit()) {
            return c;
        }
        String note = String.format(java.util.Locale.ROOT, "the JDK's AES-GCM alone allocates %.2f KB to open an "
                + "operation's %d fields (timed by this benchmark), over the %.0f KB limit; the proxy's own share is "
                + "%.2f KB per read", cipherBytes / 1024, OverheadBenchmark.FIELDS, c.limit() / 1024,
                (c.figure() - cipherBytes) / 1024);
        return new Check(c.rule(), c.subject(), c.against(), c.phase(), c.figure(), c.baseline(), c.cipherCost(),
                c.limit(), c.ratio(), Verdict.BELOW_FLOOR, note);
    }

    /**
     * @param paired rule 5's side-by-side figures, by the name of the target with metrics
     * @param cipherReadBytes what the JDK's AES-GCM alone allocates to open an operation's fields, NaN if not measured
     */
    public static List<Check> evaluate(List<Target> targets, Map<String, Figures> figures,
                                       Map<String, Figures.Paired> paired, CryptoCosts crypto,
                                       List<AllocationProbe.Allocation> allocations, String allocationNote,
                                       double cipherReadBytes) {
        List<Check> checks = new ArrayList<>();
        for (Target p : targets) {
            if (p.kind() == Target.Kind.PROXY_PLAIN && !p.tls() && !p.metrics()) {
                Optional<Target> relay = peer(targets, Target.Kind.RELAY, p.transport());
                checks.add(relay.map(r -> ratio(1, p.name(), r.name(), "both", figures.get(p.name()).cpuBoth().median(),
                                figures.get(r.name()).cpuBoth().median(), PLAIN_OVER_RELAY))
                        .orElse(absent(1, p.name(), "both", "no relay on " + p.transport())));
            }
        }
        for (Target e : targets) {
            if (e.kind() == Target.Kind.ENCRYPTED && !e.tls() && !e.metrics() && e.suite().equals("AES_GCM")) {
                Optional<Target> plain = peer(targets, Target.Kind.PROXY_PLAIN, e.transport());
                checks.add(plain.map(p -> floored(ratio(2, e.name(), p.name(), "both",
                                figures.get(e.name()).cpuBoth().median(), figures.get(p.name()).cpuBoth().median(),
                                AES_OVER_PLAIN), crypto, e.suite()))
                        .orElse(absent(2, e.name(), "both", "no proxy without policy on " + e.transport())));
            }
        }
        for (Target e : targets) {
            if (e.kind() != Target.Kind.ENCRYPTED || e.tls() || e.metrics()) {
                continue;
            }
            Optional<Target> plain = peer(targets, Target.Kind.PROXY_PLAIN, e.transport());
            for (String phase : List.of("insert", "read")) {
                checks.add(plain.map(p -> additive(3, e.name(), p.name(), phase, figures.get(e.name()).cpu(phase).median(),
                                figures.get(p.name()).cpu(phase).median(), crypto.msPer1000Ops(e.suite(), phase),
                                cipherFactor(crypto, e.suite())))
                        .orElse(absent(3, e.name(), phase, "no proxy without policy on " + e.transport())));
            }
        }
        for (Target m : targets) {
            if (!m.metrics() || m.tls()) {
                continue;
            }
            Target o = Target.twinOf(targets, m);
            Figures.Paired p = paired.get(m.name());
            if (o == null) {
                checks.add(absent(5, m.name(), "both", "no twin without metrics on " + m.transport()));
            } else if (p != null && p.ratio().present()) {
                checks.add(pairedRatio(5, m.name(), o.name(), p, METRICS_OVER_OFF));
            } else {
                checks.add(ratio(5, m.name(), o.name(), "both", figures.get(m.name()).cpuBoth().median(),
                        figures.get(o.name()).cpuBoth().median(), METRICS_OVER_OFF));
            }
        }
        boolean aesRead = false;
        for (AllocationProbe.Allocation a : allocations) {
            Target t = byName(targets, a.target());
            if (t != null && t.kind() == Target.Kind.ENCRYPTED && !t.tls() && t.suite().equals("AES_GCM")
                    && a.operation().equals("read")) {
                checks.add(flooredAllocation(ceiling(4, a.target(), "read", a.sampledBytesPerOp(), ALLOC_LIMIT_BYTES,
                        a.note()), cipherReadBytes));
                aesRead = true;
            }
        }
        if (!aesRead) {
            checks.add(absent(4, "AES_GCM", "read", allocationNote != null ? "no allocation probe: " + allocationNote
                    : "no allocation probe of an AES_GCM target's read phase"));
        }
        return checks;
    }

    private static Check absent(int rule, String subject, String phase, String why) {
        return new Check(rule, subject, null, phase, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Verdict.NOT_EVALUATED, why);
    }

    /** The first plaintext target of that kind on that transport (TLS targets are never a baseline). */
    private static Optional<Target> peer(List<Target> targets, Target.Kind kind, String transport) {
        return targets.stream().filter(t -> t.kind() == kind && !t.tls() && !t.metrics()
                && transport.equals(t.transport())).findFirst();
    }

    private static Target byName(List<Target> targets, String name) {
        return targets.stream().filter(t -> t.name().equals(name)).findFirst().orElse(null);
    }
}
