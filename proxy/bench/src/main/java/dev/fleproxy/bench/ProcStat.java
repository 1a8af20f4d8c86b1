package dev.fleproxy.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A process's CPU time from {@code /proc/PID/stat}: utime + stime (fields 14 and 15), in clock
 * ticks of {@code getconf CLK_TCK}. The command name (field 2) is in parentheses and may itself
 * hold spaces and parentheses, so fields are counted after the last ')'.
 */
public final class ProcStat {
    private static volatile long clkTck;

    private ProcStat() {
    }

    /** utime + stime in clock ticks from the text of a /proc/PID/stat file. */
    public static long cpuTicks(String statLine) {
        int close = statLine.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: no ')' after the command name");
        }
        // After ") ": field 3 (state) is index 0, so field n is index n - 3.
        String[] f = statLine.substring(close + 1).trim().split("\\s+");
        if (f.length < 13) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: " + f.length + " fields after the command name");
        }
        try {
            return Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: utime/stime '" + f[11] + "', '" + f[12] + "'");
        }
    }

    /** The process's utime + stime now, in clock ticks. */
    public static long cpuTicks(long pid) {
        try {
            return cpuTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
        } catch (NoSuchFileException e) {
            throw new IllegalStateException("process " + pid + " is gone (no /proc/" + pid + "/stat)");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + "/stat: " + e.getMessage());
        }
    }

    /**
     * utime + stime of the process's JIT compiler threads now (HotSpot names them "C1 CompilerThread0",
     * "C2 CompilerThread1", ...: /proc shows the first 15 characters), in clock ticks; 0 if the
     * process has none. Compiling is work a JVM does once per method, not per operation: a run reports
     * it apart so that a steady-state cost per operation can be read without what was still being
     * compiled.
     */
    public static long jitTicks(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        long ticks = 0;
        try (var threads = Files.newDirectoryStream(tasks)) {
            for (Path t : threads) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"));
                } catch (NoSuchFileException e) {
                    continue; // the thread ended meanwhile
                }
                if (isCompilerThread(stat)) {
                    ticks += cpuTicks(stat);
                }
            }
        } catch (NoSuchFileException e) {
            throw new IllegalStateException("process " + pid + " is gone (no " + tasks + ")");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + tasks + ": " + e.getMessage());
        }
        return ticks;
    }

    /** Whether a /proc/PID/task/TID/stat line is a HotSpot JIT compiler thread's. */
    static boolean isCompilerThread(String statLine) {
        int open = statLine.indexOf('(');
        return open >= 0 && (statLine.startsWith("C1 CompilerThre", open + 1)
                || statLine.startsWith("C2 CompilerThre", open + 1));
    }

    /** Ticks to milliseconds. */
    public static double millis(long ticks) {
        return ticks * 1000.0 / clkTck();
    }

    /** {@code getconf CLK_TCK}, 100 if that cannot be run. */
    public static long clkTck() {
        long t = clkTck;
        if (t == 0) {
            t = 100;
            try {
                Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes()).trim();
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    t = Long.parseLong(out);
                }
            } catch (IOException | NumberFormatException e) {
                // keep 100, Linux's USER_HZ nearly everywhere
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            clkTck = t;
        }
        return t;
    }
}
