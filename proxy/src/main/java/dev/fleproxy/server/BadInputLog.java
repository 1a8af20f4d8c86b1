package dev.fleproxy.server;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Log lines about peers that have proved nothing, rate-limited so that a flood of bad input
 * cannot fill the disk, and the per-connection lines about the upstream (its closing a
 * connection, its being unreachable), which a flood of short client connections, or an upstream
 * that is down, would otherwise write once per connection. Per {@link Reason}, the first
 * occurrence after a quiet window is logged in full; the ones that follow within the window are
 * counted, and one summary line per window reports how many there were and the latest of them
 * ("… and 12,345 more like it in the last 10 s"). So each reason writes at most two lines per
 * window, however fast it recurs.
 *
 * <p>Summaries are written by a task scheduled on the event loop of the connection that was
 * counted (no thread of its own). Thread-safe: one instance serves every event loop of a server.
 * The environment variable FLE_PROXY_BAD_INPUT_LOG_WINDOW_MS sets the window (0: every line in
 * full, as tests that check each bad input's own line want).
 */
final class BadInputLog {
    static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Why a connection was closed (or refused); a small closed set, each rate-limited on its own, at its level. */
    enum Reason {
        PROTOCOL_ERROR,
        /** A TLS handshake or record that failed (no or an untrusted client certificate, plaintext on a TLS port). */
        TLS,
        MALFORMED_BSON,
        INCOMPLETE_MESSAGE,
        IDLE,
        OVER_BUDGET,
        TOO_MANY_CONNECTIONS,
        REFUSED,
        /** The upstream closed a client's upstream connection: news, not a problem, unless it is every one. */
        UPSTREAM_CLOSED(Level.INFO),
        /** The upstream could not be connected to (or its TLS failed) for a new client connection. */
        UPSTREAM_UNAVAILABLE,
        /** Not bad input as far as we can tell: logged at ERROR, the first one with its stack trace. */
        UNEXPECTED_ERROR(Level.ERROR);

        final Level level;

        Reason() {
            this(Level.WARN);
        }

        Reason(Level level) {
            this.level = level;
        }
    }

    private final Logger log;
    private final long windowNanos;
    private final LongSupplier clock;
    private final Map<Reason, Window> windows = new EnumMap<>(Reason.class);

    /** One reason's window: guarded by itself. */
    private static final class Window {
        long endsAt;
        boolean open;
        long suppressed;
        boolean flushScheduled;
        String latestWho;
        String latestText;
    }

    /** The window from FLE_PROXY_BAD_INPUT_LOG_WINDOW_MS (default 10 s; 0 writes every line in full). */
    BadInputLog(Logger log) {
        this(log, windowFromEnvironment(System.getenv("FLE_PROXY_BAD_INPUT_LOG_WINDOW_MS")), System::nanoTime);
    }

    static long windowFromEnvironment(String ms) {
        if (ms == null || ms.isBlank()) {
            return WINDOW_NANOS;
        }
        try {
            return TimeUnit.MILLISECONDS.toNanos(Math.max(0, Long.parseLong(ms.trim())));
        } catch (NumberFormatException e) {
            LoggerFactory.getLogger(BadInputLog.class).warn("FLE_PROXY_BAD_INPUT_LOG_WINDOW_MS={} is not a number of "
                    + "milliseconds; using 10000", ms);
            return WINDOW_NANOS;
        }
    }

    BadInputLog(Logger log, long windowNanos, LongSupplier clock) {
        this.log = log;
        this.windowNanos = windowNanos;
        this.clock = clock;
        for (Reason r : Reason.values()) {
            windows.put(r, new Window());
        }
    }

    /**
     * Logs (or counts) one occurrence. who names the connection ("conn#7 from /10.0.0.5:51234"),
     * text says what happened; cause, for {@link Reason#UNEXPECTED_ERROR}, is the stack trace of
     * the line logged in full. scheduler runs the window's summary (a connection's event loop).
     */
    void report(Reason reason, String who, String text, Throwable cause, ScheduledExecutorService scheduler) {
        Window w = windows.get(reason);
        long now = clock.getAsLong();
        boolean full;
        boolean schedule = false;
        long delay = 0;
        synchronized (w) {
            if (w.open && now - w.endsAt >= 0 && w.suppressed == 0 && !w.flushScheduled) {
                w.open = false; // a whole window passed quietly
            }
            full = !w.open;
            if (full) {
                w.open = true;
                w.endsAt = now + windowNanos;
            } else {
                w.suppressed++;
                w.latestWho = who;
                w.latestText = text;
                if (!w.flushScheduled) {
                    w.flushScheduled = true;
                    schedule = true;
                    delay = Math.max(0, w.endsAt - now);
                }
            }
        }
        if (full) {
            write(reason, who + ": " + text, cause);
        } else if (schedule) {
            try {
                scheduler.schedule(() -> flush(reason), delay, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shuttingDown) {
                flush(reason);
            }
        }
    }

    /** Writes the window's summary, if anything was counted, and opens the next window. */
    void flush(Reason reason) {
        Window w = windows.get(reason);
        long n;
        String who;
        String text;
        synchronized (w) {
            n = w.suppressed;
            who = w.latestWho;
            text = w.latestText;
            w.suppressed = 0;
            w.flushScheduled = false;
            w.latestWho = null;
            w.latestText = null;
            // The summary is this window's line: the next occurrence is counted towards the next one.
            w.open = true;
            w.endsAt = clock.getAsLong() + windowNanos;
        }
        if (n > 0) {
            String window = windowNanos >= TimeUnit.SECONDS.toNanos(1)
                    ? TimeUnit.NANOSECONDS.toSeconds(windowNanos) + " s" : TimeUnit.NANOSECONDS.toMillis(windowNanos) + " ms";
            write(reason, String.format(Locale.ROOT, "%s: %s … and %,d more like it in the last %s", who, text, n,
                    window), null);
        }
    }

    private void write(Reason reason, String line, Throwable cause) {
        log.atLevel(reason.level).setCause(cause).log(line);
    }

    /** Runtime exceptions that reading a message whose lengths or types lie throws, and our bugs rarely do. */
    static boolean isMalformedInputSymptom(Throwable t) {
        if (t instanceof io.netty.util.IllegalReferenceCountException) {
            return false; // an IllegalStateException, but a buffer released twice is always ours
        }
        return t instanceof IllegalArgumentException // NumberFormatException included
                || t instanceof IllegalStateException
                || t instanceof IndexOutOfBoundsException
                || t instanceof ArithmeticException
                || t instanceof ClassCastException
                || t instanceof NegativeArraySizeException
                || t instanceof java.nio.BufferUnderflowException
                || t instanceof java.nio.BufferOverflowException;
    }

    /**
     * " in RawBsonDocument.containsKey via CollectionDefinitions.collectionOptions": the call out of
     * our code that threw, and our method that made it (or just ours, or just the top frame).
     */
    static String thrownAt(Throwable t) {
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < st.length; i++) {
            if (st[i].getClassName().startsWith("dev.fleproxy.")) {
                return i == 0 ? " in " + frame(st[0]) : " in " + frame(st[i - 1]) + " via " + frame(st[i]);
            }
        }
        return st.length == 0 ? "" : " in " + frame(st[0]);
    }

    private static String frame(StackTraceElement e) {
        String c = e.getClassName();
        return c.substring(c.lastIndexOf('.') + 1) + "." + e.getMethodName();
    }
}
