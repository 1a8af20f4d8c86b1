package dev.fleproxy.tls;

import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says when a certificate in force nears its end, so that a renewal that did not happen is seen
 * before peers refuse the proxy: a WARN line at start and once a day after for each certificate
 * that expires within {@link #SOON}, an ERROR line once it has expired (a certificate can expire
 * while the proxy runs; start and reload refuse expired ones).
 */
public final class ExpiryWarnings implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ExpiryWarnings.class);
    /** How long before its end a certificate is warned about. */
    public static final Duration SOON = Duration.ofDays(14);

    private final Map<String, Supplier<X509Certificate>> certificates;
    private final ScheduledExecutorService timer;

    private ExpiryWarnings(Map<String, Supplier<X509Certificate>> certificates) {
        this.certificates = new LinkedHashMap<>(certificates); // in the caller's order, for the log
        this.timer = certificates.isEmpty() ? null : Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tls-expiry");
            t.setDaemon(true);
            return t;
        });
    }

    /** Checks these certificates (by name: listener, upstream_client) now, then once a day; none, no thread. */
    public static ExpiryWarnings start(Map<String, Supplier<X509Certificate>> certificates) {
        ExpiryWarnings w = new ExpiryWarnings(certificates);
        if (w.timer != null) {
            w.check();
            w.timer.scheduleAtFixedRate(w::check, 1, 1, TimeUnit.DAYS);
        }
        return w;
    }

    private void check() {
        Instant now = Instant.now();
        certificates.forEach((name, leaf) -> {
            X509Certificate c = leaf.get();
            String warning = warning(name, c, now);
            if (warning == null) {
                return;
            }
            if (now.isAfter(c.getNotAfter().toInstant())) {
                log.error(warning);
            } else {
                log.warn(warning);
            }
        });
    }

    /** What to say about this certificate at {@code now}, or null if it is good for more than {@link #SOON}. */
    public static String warning(String name, X509Certificate c, Instant now) {
        Instant until = c.getNotAfter().toInstant();
        String which = "the " + name + " TLS certificate (" + c.getSubjectX500Principal().getName() + ")";
        if (now.isAfter(until)) {
            return which + " expired on " + until + ": peers refuse it; replace it";
        }
        Duration left = Duration.between(now, until);
        if (left.compareTo(SOON) > 0) {
            return null;
        }
        String in = left.toDays() == 0 ? "less than a day" : left.toDays() + (left.toDays() == 1 ? " day" : " days");
        return which + " expires in " + in + ", on " + until + ": renew it before then";
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
