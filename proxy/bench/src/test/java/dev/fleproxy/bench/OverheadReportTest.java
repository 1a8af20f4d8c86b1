package dev.fleproxy.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The report's section on TLS, on figures made up to be easy to check by hand. */
class OverheadReportTest {
    private static final Target DIRECT = Target.parse("kind=direct,uri=mongodb://h:1");
    private static final Target RELAY = Target.parse("kind=relay,uri=mongodb://h:2,pid=2,transport=epoll");
    private static final Target PLAIN = Target.parse("kind=proxy-plain,uri=mongodb://h:3,pid=3,transport=epoll");
    private static final Target AES = Target.parse("kind=encrypted,uri=mongodb://h:3,pid=3,transport=epoll,"
            + "suite=AES_GCM,collection=aes");
    private static final Target PLAIN_TLS = Target.parse("kind=proxy-plain,uri=mongodb://h:4/?tls=true,pid=4,"
            + "transport=epoll,tls=true");
    private static final Target AES_TLS = Target.parse("kind=encrypted,uri=mongodb://h:4/?tls=true,pid=4,"
            + "transport=epoll,suite=AES_GCM,collection=aes,tls=true");
    private static final Target NIO_TLS = Target.parse("kind=proxy-plain,uri=mongodb://h:5,pid=5,transport=nio,tls=true");

    @Test
    void tlsIsSetBesideItsPlaintextTwinAndTheCostOfFieldEncryption() {
        // The TLS targets come first here: twins are found by kind, transport and suite, not by order.
        List<Target> targets = List.of(DIRECT, NIO_TLS, AES_TLS, PLAIN_TLS, RELAY, PLAIN, AES);
        List<OverheadBenchmark.Phase> phases = new ArrayList<>();
        // CPU ms per 1,000 ops, insert and read; 1,000 ops per 1 s phase, so "both" is their mean.
        rounds(phases, DIRECT, Double.NaN, Double.NaN);
        rounds(phases, NIO_TLS, 50, 50);
        rounds(phases, AES_TLS, 86, 90);     // both 88: +8 over AES-GCM (+10 %), +28 over no policy
        rounds(phases, PLAIN_TLS, 64, 68);   // both 66: +6 over no policy (+10 %)
        rounds(phases, RELAY, 40, 40);
        rounds(phases, PLAIN, 58, 62);       // both 60
        rounds(phases, AES, 78, 82);         // both 80: field encryption +20
        OverheadBenchmark.Result result = new OverheadBenchmark.Result(phases, List.of(), "--no-alloc");
        String md = OverheadReport.markdown(targets, result, List.of(), info());

        // Transports in order of their first TLS target, the proxy without policy first in each.
        assertEquals(List.of(
                "| nio | none | TLS | proxy nio, no policy, TLS | 1000 (1000–1000) | 1000 (1000–1000) "
                        + "| 50.0 (49.0–51.0) | – (no plaintext proxy without policy target on nio) |",
                "| epoll | none | plaintext | proxy epoll, no policy | 1000 (1000–1000) | 1000 (1000–1000) "
                        + "| 60.0 (59.0–61.0) |  |",
                "| epoll | none | TLS | proxy epoll, no policy, TLS | 1000 (1000–1000) | 1000 (1000–1000) "
                        + "| 66.0 (65.0–67.0) | +6.0 (+10 %) |",
                "| epoll | AES_GCM | plaintext | AES_GCM epoll | 1000 (1000–1000) | 1000 (1000–1000) "
                        + "| 80.0 (79.0–81.0) |  |",
                "| epoll | AES_GCM | TLS | AES_GCM epoll, TLS | 1000 (1000–1000) | 1000 (1000–1000) "
                        + "| 88.0 (87.0–89.0) | +8.0 (+10 %) |"),
                tableRows(section(md, "## TLS on the client side", "### ")));
        assertEquals(List.of(
                "| nio | – | – | – | – | – |",
                "| epoll | AES_GCM | +6.0 | +8.0 | +20.0 | +28.0 |"),
                tableRows(section(md, "### TLS beside field encryption", "## ")));
        // It comes after the targets and before the table per target, which marks TLS in its kind column.
        assertTrue(md.indexOf("## The targets") < md.indexOf("## TLS on the client side")
                && md.indexOf("## TLS on the client side") < md.indexOf("## Per target"));
        assertTrue(md.contains("| AES_GCM epoll, TLS | encrypted (AES_GCM), TLS | epoll | "), md);
        assertTrue(md.contains("| proxy epoll, no policy | proxy-plain | epoll | "), md);
    }

    @Test
    void noTlsTargetsNoSection() {
        List<Target> targets = List.of(DIRECT, PLAIN, AES);
        List<OverheadBenchmark.Phase> phases = new ArrayList<>();
        rounds(phases, PLAIN, 60, 60);
        rounds(phases, AES, 80, 80);
        String md = OverheadReport.markdown(targets, new OverheadBenchmark.Result(phases, List.of(), null), List.of(),
                info());
        assertFalse(md.contains("TLS"), md);
        assertTrue(OverheadReport.tlsPairs(targets).isEmpty());
    }

    @Test
    void theCsvSaysWhichPhasesRanOverTls() {
        List<Target> targets = List.of(PLAIN, PLAIN_TLS);
        List<OverheadBenchmark.Phase> phases = new ArrayList<>();
        phases.add(ChecksTest.phase(PLAIN, "insert", 1, 1000, 60));
        phases.add(ChecksTest.phase(PLAIN_TLS, "insert", 1, 1000, 66));
        String[] lines = OverheadReport.csv(targets, new OverheadBenchmark.Result(phases, List.of(), null)).split("\n");
        assertTrue(lines[0].startsWith("round,target,kind,transport,suite,tls,metrics,operation,ops,"), lines[0]);
        assertEquals("1,\"proxy epoll, no policy\",proxy-plain,epoll,,false,false,insert,1000,1.000,1000.0,0.500,60,60.000,,,,,",
                lines[1]);
        assertEquals("1,\"proxy epoll, no policy, TLS\",proxy-plain,epoll,,true,false,insert,1000,1.000,1000.0,0.500,66,66.000,,,,,",
                lines[2]);
    }

    /** Two rounds, one 1 ms per 1,000 ops below the given figures, one above: the medians are the figures. */
    private static void rounds(List<OverheadBenchmark.Phase> phases, Target t, double insertMs, double readMs) {
        for (int round = 1; round <= 2; round++) {
            double d = round == 1 ? -1 : 1;
            phases.add(ChecksTest.phase(t, "insert", round, 1000, insertMs + d));
            phases.add(ChecksTest.phase(t, "read", round, 1000, readMs + d));
        }
    }

    static OverheadReport.RunInfo info() {
        return new OverheadReport.RunInfo("java -jar fle-bench.jar overhead", 8, 1, 2, 0, 0, 4, 1, 2, "a CPU", "17",
                List.of(), 100, "results/crypto/results.csv", List.of());
    }

    private static String section(String md, String heading, String next) {
        int from = md.indexOf(heading);
        assertTrue(from >= 0, "no " + heading + " in:\n" + md);
        int to = md.indexOf("\n" + next, from + heading.length());
        return md.substring(from, to < 0 ? md.length() : to);
    }

    private static List<String> tableRows(String section) {
        return section.lines().filter(l -> l.startsWith("| ") && !l.startsWith("| transport |")).toList();
    }
}
