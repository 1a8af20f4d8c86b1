package dev.fleproxy.rewrap;

import com.mongodb.MongoException;
import dev.fleproxy.keys.KeyAccessException;
import java.io.PrintStream;
import java.util.function.Supplier;

/**
 * Runs an action of a run, retrying while the upstream or the KMS is unavailable (backoff 0.5 s
 * doubling to 8 s) for up to the run's retrySeconds; then stops the run ({@link Rewrap.Stopped}).
 * Definitive key problems (revoked, unknown) stop it at once. Shared by the run's threads.
 */
final class Retry {
    private final double seconds;
    private final PrintStream err;

    Retry(double seconds, PrintStream err) {
        this.seconds = seconds;
        this.err = err;
    }

    <T> T run(String what, Supplier<T> action) {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        long backoffMs = 500;
        while (true) {
            try {
                return action.get();
            } catch (MongoException | KeyAccessException e) {
                boolean definitive = e instanceof KeyAccessException k && k.isDefinitive();
                if (definitive || System.nanoTime() + backoffMs * 1_000_000 > deadline) {
                    throw new Rewrap.Stopped(what + " failed" + (definitive ? "" : " for " + seconds + " s")
                            + ": " + e.getMessage(), e);
                }
                err.println("rewrap: " + what + " failed (" + e.getMessage() + "); pausing, retry in "
                        + backoffMs / 1000.0 + " s");
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new Rewrap.Stopped("interrupted", ie);
                }
                backoffMs = Math.min(8000, backoffMs * 2);
            }
        }
    }
}
