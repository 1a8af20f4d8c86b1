package dev.fleproxy.config;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP, shared: the JVM keeps one handler per signal, so the policy and the TLS certificates
 * (each reloaded on SIGHUP) register here and are all called. Handlers must only hand their work
 * to a thread of their own; they run on the JVM's signal thread.
 */
public final class Hangup {
    private static final Logger log = LoggerFactory.getLogger(Hangup.class);
    private static final List<Runnable> HANDLERS = new CopyOnWriteArrayList<>();
    private static boolean installed;
    private static boolean available = true;

    private Hangup() {
    }

    /** Calls {@code handler} on every SIGHUP; false if SIGHUP cannot be handled here (the caller says what still works). */
    public static synchronized boolean onHangup(Runnable handler) {
        if (!installed) {
            installed = true;
            try {
                sun.misc.Signal.handle(new sun.misc.Signal("HUP"), sig -> HANDLERS.forEach(h -> {
                    try {
                        h.run();
                    } catch (RuntimeException e) {
                        log.error("a SIGHUP handler failed", e);
                    }
                }));
            } catch (IllegalArgumentException e) {
                available = false;
                log.warn("SIGHUP is not available here ({})", e.getMessage());
            }
        }
        HANDLERS.add(handler);
        return available;
    }

    /** Stops calling {@code handler} (a component closed). */
    public static void remove(Runnable handler) {
        HANDLERS.remove(handler);
    }
}
