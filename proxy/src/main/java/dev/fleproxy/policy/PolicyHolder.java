package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.Hangup;
import dev.fleproxy.config.ProxyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy in force, reloaded from the config file on SIGHUP or when the file changes (checked
 * every two seconds) without touching connections: requests in flight finish under the policy they
 * started with. A new file that does not parse or whose policy is malformed is not applied; the old
 * policy stays and the log says why. Nor is one that would lower protection ({@link
 * PolicyDowngrade}): that takes a restart, so it is never done by a stray edit; the collections
 * such a file adds apply all the same. A file that passes is in force as soon as it is read, before
 * any KMS round trip; its keys are checked afterwards ({@link KeyCheck}), and a key the KMS
 * refuses leaves its collection refused, not unencrypted. Only {@code collections:} and {@code
 * envelopeSubtype:} are reloaded; the rest of the file needs a restart.
 */
public final class PolicyHolder implements Supplier<Policy>, AutoCloseable {
    /**
     * The KMS half of a reload ({@code keys.PolicyKeyCheck}), run after the new policy is in force:
     * the policy itself does no KMS I/O.
     */
    public interface KeyCheck extends AutoCloseable {
        /** Checks this policy's keys in the background; completes when the check is over or dropped. */
        CompletableFuture<Void> start(Policy policy, String why);

        /** The latest check started. */
        CompletableFuture<Void> latest();

        /** True if the KMS said it does not have this key (a reload may then drop it). */
        boolean knownToBeUnknown(UUID id);

        @Override
        void close();

        /** Makes the check of a holder, which says which policy is in force. */
        interface Factory {
            KeyCheck forPolicyIn(Supplier<Policy> inForce);
        }
    }

    private static final Logger log = LoggerFactory.getLogger(PolicyHolder.class);

    private final Path file;
    private final ProxyConfig started;
    private final ScheduledExecutorService watcher;
    /** Checks a reloaded policy's keys after it is in force; null without a KMS. */
    private final KeyCheck keyCheck;
    private volatile Policy current;
    private byte[] fingerprint;
    private final java.util.concurrent.atomic.AtomicLong reloadsApplied = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong reloadsFailed = new java.util.concurrent.atomic.AtomicLong();
    private final Runnable onHangup = this::reloadOnHangup;

    /** {@code keyChecks}: null when the proxy runs without a KMS (then no collection may be added). */
    public PolicyHolder(Path file, ProxyConfig started, Policy startedPolicy, KeyCheck.Factory keyChecks) {
        this.file = file;
        this.started = started;
        this.current = startedPolicy;
        this.fingerprint = digest();
        this.keyCheck = keyChecks != null ? keyChecks.forPolicyIn(this) : null;
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
        ConfigFile loaded;
        try {
            loaded = ConfigFile.load(file);
        } catch (ConfigException e) {
            log.error("policy reload ({}) failed, keeping the previous policy: {}", why, e.getMessage());
            return false;
        }
        ProxyConfig c = loaded.config();
        Policy p = loaded.policy();
        if (!p.isEmpty() && keyCheck == null) {
            log.error("policy reload ({}) failed, keeping the previous policy: collections need the kmip: section the "
                    + "proxy was started with", why);
            return false;
        }
        // Decided from the file alone: a downgrade is refused whatever the KMS would say, and so is
        // the refused file's own key check, whose warnings would describe a policy not in force.
        List<String> lowered = PolicyDowngrade.of(current, p, keyCheck != null ? keyCheck::knownToBeUnknown : id -> false);
        if (!lowered.isEmpty()) {
            Policy withNew = withNewCollections(current, p);
            String added = withNew == current ? "" : ", with the file's new collection(s) "
                    + withNew.collections().keySet().stream().filter(ns -> current.get(ns) == null).sorted().toList()
                    + " added to it (adding protection never waits)";
            log.warn("policy reload ({}) not applied: {} would remove or lower: {}. The previous policy stays in force{}; "
                    + "a restart applies the new file", why, file, String.join("; ", lowered), added);
            if (withNew != current) {
                current = withNew;
                keyCheck.start(withNew, why);
            }
            return false;
        }
        if (!c.listener().address().equals(started.listener().address()) || !c.upstream().form().equals(started.upstream().form())
                || (c.kmip() != null && !c.kmip().equals(started.kmip()))) {
            log.warn("{} changed listen/upstream/kmip settings; those apply at the next restart only", file);
        }
        // In force before any KMS round trip: from here on a new collection's writes are encrypted,
        // or wait for its key and are refused (9720020), never forwarded in plaintext.
        Policy before = current;
        current = p;
        log.info("policy reloaded ({}): {} encrypted collection(s); {}{}", why, p.collections().size(),
                PolicyChanges.between(before, p), p.isEmpty() ? "" : "; checking its keys with the KMS");
        if (!p.isEmpty()) {
            keyCheck.start(p, why);
        }
        return true;
    }

    /**
     * The policy in force plus the collections {@code next} adds. A file that lowers protection
     * somewhere is refused, but a collection it adds has no previous protection to lower, and
     * writes to it would go unencrypted until a restart: that part applies at once.
     */
    private static Policy withNewCollections(Policy current, Policy next) {
        Map<String, CollectionPolicy> merged = new LinkedHashMap<>(current.collections());
        next.collections().forEach(merged::putIfAbsent);
        return merged.size() == current.collections().size() ? current : new Policy(merged, current.identities());
    }

    /** The key check of the latest policy put in force by a reload: done when its keys are checked (tests). */
    public CompletableFuture<Void> keysChecked() {
        return keyCheck != null ? keyCheck.latest() : CompletableFuture.completedFuture(null);
    }

    @Override
    public void close() {
        Hangup.remove(onHangup);
        watcher.shutdownNow();
        if (keyCheck != null) {
            keyCheck.close();
        }
    }
}
