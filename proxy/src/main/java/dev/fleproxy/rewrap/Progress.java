package dev.fleproxy.rewrap;

import java.io.PrintStream;
import java.util.Locale;

/**
 * Count, rate and time left: a bar redrawn in place on a terminal, a plain line every few seconds
 * otherwise (logs, CI). The total is the collection's size when the run began (documents inserted
 * since make it an estimate).
 */
final class Progress {
    private final PrintStream out;
    private final boolean terminal;
    private final String what;
    private final long total;
    private final long startedAt = System.nanoTime();
    private final long startCount;
    private long lastShown;

    Progress(PrintStream out, boolean terminal, String what, long total, long startCount) {
        this.out = out;
        this.terminal = terminal;
        this.what = what;
        this.total = total;
        this.startCount = startCount;
        this.lastShown = System.nanoTime();
    }

    void update(long done) {
        long now = System.nanoTime();
        if (now - lastShown < (terminal ? 200_000_000L : 5_000_000_000L)) {
            return;
        }
        lastShown = now;
        show(done, false);
    }

    void finish(long done) {
        show(done, true);
    }

    private void show(long done, boolean last) {
        double seconds = (System.nanoTime() - startedAt) / 1e9;
        double rate = seconds > 0 ? (done - startCount) / seconds : 0;
        String left = rate > 0 && total > done ? ", about " + duration((total - done) / rate) + " left" : "";
        String count = String.format(Locale.ROOT, "%,d of %,d documents (%d %%), %,.0f/s", done, total,
                total > 0 ? Math.min(100, done * 100 / total) : 100, rate);
        if (terminal) {
            int width = 30;
            int filled = total > 0 ? (int) Math.min(width, done * width / total) : width;
            out.print("\r" + what + " [" + "#".repeat(filled) + ".".repeat(width - filled) + "] " + count + left
                    + "   " + (last ? "\n" : ""));
        } else {
            out.println(what + ": " + count + left);
        }
        out.flush();
    }

    static String duration(double seconds) {
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%d h %02d min", s / 3600, s % 3600 / 60)
                : s >= 60 ? String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60) : s + " s";
    }
}
