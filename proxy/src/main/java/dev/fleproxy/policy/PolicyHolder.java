package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.Hangup;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.keys.KeyResolver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy in force, reloaded from the config file on SIGHUP or when the file changes (checked
 * every two seconds) without touching connections: requests in flight finish under the policy they
 * started with. A new file that does not parse or validate is not applied; the old policy stays
 * and the log says why. Nor is one that would lower protection ({@link PolicyDowngrade}): that
 * takes a restart, so it is never done by a stray edit. Only {@code collections:} and {@code
 * envelopeSubtype:} are reloaded; the rest of the file needs a restart.
 */
public final class PolicyHolder implements Supplier<Policy>, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PolicyHolder.class);

    private final Path file;
    private final KeyResolver resolver;
    private final ProxyConfig started;
    private final ScheduledExecutorService watcher;
    private volatile Policy current;
    private byte[] fingerprint;
    private final java.util.concurrent.atomic.AtomicLong reloadsApplied = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong reloadsFailed = new java.util.concurrent.atomic.AtomicLong();
    private final Runnable onHangup = this::reloadOnHangup;

    public PolicyHolder(Path file, ProxyConfig started, Policy startedPolicy, KeyResolver resolver) {
        this.file = file;
        this.started = started;
        this.resolver = resolver;
        this.current = startedPolicy;
        this.fingerprint = digest();
        this.watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "policy-reload");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the file watch and the SIGHUP handler. */
    public PolicyHolder watch() {
        watcher.scheduleWithFixedDelay(this::checkFile, 2, 2, TimeUnit.SECONDS);
        if (!Hangup.onHangup(onHangup)) {
            log.warn("the policy still reloads when {} changes", file);
        }
        return this;
    }

    private void reloadOnHangup() {
        watcher.execute(() -> reload("SIGHUP"));
    }

    @Override
    public Policy get() {
        return current;
    }

    private void checkFile() {
        byte[] now = digest();
        if (now != null && !Arrays.equals(now, fingerprint)) {
            reload("the file changed");
        }
    }

    private byte[] digest() {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (IOException | NoSuchAlgorithmException e) {
            return null;
        }
    }

    /** Loads and validates the file; applies it if it is good. Returns whether it was applied. */
    public synchronized boolean reload(String why) {
        boolean applied = apply(why);
        (applied ? reloadsApplied : reloadsFailed).incrementAndGet();
        return applied;
    }

    /** Reloads applied, and refused or failed, since start (for the metrics). */
    public long reloads(boolean applied) {
        return (applied ? reloadsApplied : reloadsFailed).get();
    }

    private boolean apply(String why) {
        fingerprint = digest();
        ProxyConfig c;
        Policy p;
        List<String> warnings;
        try {
            c = ProxyConfig.load(file);
            p = PolicyParser.parse(c.policySection());
            warnings = p.isEmpty() || resolver == null ? List.of()
                    : PolicyValidator.validate(p, resolver, file.toString());
        } catch (ConfigException e) {
            log.error("policy reload ({}) failed, keeping the previous policy: {}", why, e.getMessage());
            return false;
        }
        if (!p.isEmpty() && resolver == null) {
            log.error("policy reload ({}) failed, keeping the previous policy: collections need the kmip: section the "
                    + "proxy was started with", why);
            return false;
        }
        // Checked after validation, so that "a restart applies it" is true of a refused file. One
        // line, and the validator's warnings are not logged: they describe a policy not in force.
        List<String> lowered = PolicyDowngrade.of(current, p);
        if (!lowered.isEmpty()) {
            log.warn("policy reload ({}) not applied: {} would remove or lower: {}. The previous policy stays in force; "
                    + "a restart applies the new file", why, file, String.join("; ", lowered));
            return false;
        }
        warnings.forEach(log::warn);
        if (!c.listen().equals(started.listen()) || !c.upstream().equals(started.upstream())
                || (c.kmip() != null && !c.kmip().equals(started.kmip()))) {
            log.warn("{} changed listen/upstream/kmip settings; those apply at the next restart only", file);
        }
        current = p;
        log.info("policy reloaded ({}): {} encrypted collection(s) {}", why, current.collections().size(), current);
        return true;
    }

    @Override
    public void close() {
        Hangup.remove(onHangup);
        watcher.shutdownNow();
    }
}
