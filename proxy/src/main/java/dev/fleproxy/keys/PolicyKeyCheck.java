package dev.fleproxy.keys;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyHolder;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The KMS half of a reload, done after the new policy is already in force: checking a key takes a
 * KMS round trip, and a hung KMS would otherwise hold back a new collection's protection for as
 * long as its timeouts (writes went to the backend in plaintext meanwhile). Nothing here decides
 * what requests may do: a collection whose key is still being fetched waits like any request for a
 * key not in memory (up to kmsWaitMs, then 9720020), and one whose key the KMS refuses (unknown,
 * another algorithm than its suite) stays in the policy, its requests refused with 9720020 by the
 * data path, which reads the same answer from the resolver. This only says so in the log.
 *
 * <p>One thread of its own, so that a check waiting on the KMS never delays the next reload. A
 * check of a policy no longer in force is dropped; one that could not reach the KMS is tried again
 * every retry interval while its policy is in force, so a definitive problem is still logged once
 * the KMS answers.
 */
public final class PolicyKeyCheck implements PolicyHolder.KeyCheck {
    /** The holder's logger: every line about a reload reads "PolicyHolder: policy reload (…)". */
    private static final Logger log = LoggerFactory.getLogger(PolicyHolder.class);

    private final KeyResolver resolver;
    private final String source;
    private final Supplier<Policy> inForce;
    private final long retryMs;
    private final ScheduledExecutorService thread;
    /** Keys a check found the KMS does not have (and no later check found it has). */
    private final Set<UUID> unknown = ConcurrentHashMap.newKeySet();
    private volatile CompletableFuture<Void> latest = CompletableFuture.completedFuture(null);

    /** The key checks of the reloads of {@code source} (the config file), asking this resolver. */
    public static PolicyHolder.KeyCheck.Factory forReloads(KeyResolver resolver, String source) {
        return inForce -> new PolicyKeyCheck(resolver, source, inForce);
    }

    private PolicyKeyCheck(KeyResolver resolver, String source, Supplier<Policy> inForce) {
        this.resolver = resolver;
        this.source = source;
        this.inForce = inForce;
        this.retryMs = Math.max(100, resolver.settings().retryInterval().toMillis());
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "policy-key-check");
            t.setDaemon(true);
            return t;
        });
    }

    /** Checks this policy's keys in the background; the future completes when the check is over or dropped. */
    @Override
    public CompletableFuture<Void> start(Policy policy, String why) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        latest = done;
        Set<String> logged = new HashSet<>();
        try {
            thread.execute(() -> attempt(policy, why, logged, true, done));
        } catch (RejectedExecutionException closed) {
            done.complete(null);
        }
        return done;
    }

    /** The latest check started (tests wait for it). */
    @Override
    public CompletableFuture<Void> latest() {
        return latest;
    }

    /**
     * True if the KMS said it does not have this key and the resolver has not held it since: no
     * envelope can be opened with it, so a reload may drop it (the fix for a mistyped UUID).
     */
    @Override
    public boolean knownToBeUnknown(UUID id) {
        return unknown.contains(id) && !resolver.holds(id);
    }

    private void attempt(Policy policy, String why, Set<String> logged, boolean first, CompletableFuture<Void> done) {
        try {
            if (inForce.get() != policy) {
                done.complete(null); // superseded: the policy in force has a check of its own
                return;
            }
            PolicyValidator.Outcome o = PolicyValidator.check(policy, resolver, source);
            unknown.removeAll(o.known());
            unknown.addAll(o.unknown());
            if (inForce.get() != policy) {
                done.complete(null);
                return;
            }
            for (String w : o.warnings()) {
                // "could not be checked" once: retries during an outage would repeat it every few seconds
                if ((first || !o.unchecked().contains(w)) && logged.add(w)) {
                    log.warn(w);
                }
            }
            for (PolicyValidator.Problem p : o.problems()) {
                if (logged.add(p.message())) {
                    log.error("policy reload ({}): {}. The new policy stays in force: requests for {} that need this key "
                            + "are refused with 9720020 until a corrected file is loaded (never forwarded in plaintext)",
                            why, p.message(), p.namespace());
                }
            }
            if (!o.complete()) {
                thread.schedule(() -> attempt(policy, why, logged, false, done), retryMs, TimeUnit.MILLISECONDS);
                return;
            }
            log.info("policy reload ({}): keys checked with {}{}", why, resolver.describeSource(),
                    o.problems().isEmpty() ? "" : ", " + o.problems().size() + " problem(s) (see above)");
            done.complete(null);
        } catch (RejectedExecutionException closed) {
            done.complete(null);
        } catch (RuntimeException e) {
            log.error("policy reload ({}): checking its keys failed unexpectedly", why, e);
            done.complete(null);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        latest.complete(null);
    }
}
