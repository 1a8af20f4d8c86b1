package dev.fleproxy.rewrite.read;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Lowers the scheduling priority of the calling thread (nice 10), so that when the cores are
 * busy the event loops run before the evaluation pool: Java's thread priorities do nothing on
 * Linux without a start-up flag, but a thread's nice value is its own (setpriority on its thread
 * id), and raising it needs no privilege. Done once per pool thread, as it starts, with renice;
 * where either /proc/thread-self or renice is missing, the thread keeps the default priority.
 */
final class LowerPriority {
    static final int NICE = 10;

    private LowerPriority() {
    }

    static void ofThisThread() {
        try {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            String tid = stat.substring(0, stat.indexOf(' '));
            Process p = new ProcessBuilder("renice", "-n", String.valueOf(NICE), "-p", tid)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException | RuntimeException e) {
            // not Linux, or no renice: the default priority
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
