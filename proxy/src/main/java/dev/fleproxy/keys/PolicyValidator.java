package dev.fleproxy.keys;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * Checks a parsed policy against the KMS: every key exists, is unique and of an algorithm the suite
 * supports; every previous key exists and may still decrypt. Definitive problems are configuration
 * errors at start; an unreachable KMS or a key that is not Active only warn (requests for those
 * collections are refused until it is fixed). Fetching the keys here also warms the cache, so the
 * data path starts with every key in memory. Blocks on the KMS: never call it on an event loop, and
 * on a reload only after the new policy is in force ({@link PolicyKeyCheck}).
 */
public final class PolicyValidator {
    private PolicyValidator() {
    }

    /** A definitive problem with one collection's keys: the message names the file, the collection and why. */
    public record Problem(String namespace, String message) {
    }

    /**
     * What the KMS said about a policy's keys. {@code warnings} in file order, {@code unchecked}
     * those of them that say the KMS could not be asked (so a later attempt may still find a
     * problem); {@code unknown} the keys the KMS said it does not have, {@code known} those it
     * delivered.
     */
    public record Outcome(List<String> warnings, List<String> unchecked, List<Problem> problems, Set<UUID> unknown,
                          Set<UUID> known) {
        public boolean complete() {
            return unchecked.isEmpty();
        }
    }

    /** Warnings to log; throws ConfigException on the first definitive problem (at start: exit 2). */
    public static List<String> validate(Policy policy, KeyResolver resolver, String source) {
        Outcome o = check(policy, resolver, source);
        if (!o.problems().isEmpty()) {
            throw new ConfigException(o.problems().get(0).message());
        }
        return o.warnings();
    }

    /** Every collection's keys, checked: all the problems, not only the first. Blocks on the KMS. */
    public static Outcome check(Policy policy, KeyResolver resolver, String source) {
        Outcome o = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new LinkedHashSet<>(),
                new LinkedHashSet<>());
        for (CollectionPolicy cp : policy.collections().values()) {
            String where = source + ": collections." + cp.namespace();
            try {
                checkKey(cp, resolver, where, o);
                for (UUID previous : cp.previousKeys()) {
                    checkPreviousKey(cp, previous, resolver, where, o);
                }
            } catch (ConfigException e) {
                o.problems().add(new Problem(cp.namespace(), e.getMessage()));
            }
            // Said on every start and reload, so it is not forgotten once the migration is done.
            if (cp.plaintextReads()) {
                o.warnings().add(where + " has plaintextReads: allow: values of its policy fields that are not envelopes "
                        + "are returned as stored (meant only while data written before the policy is migrated)");
            }
        }
        return o;
    }

    /**
     * The key, or null if the KMS could not be asked ({@code unchecked} turns why into the warning);
     * a definitive refusal is a ConfigException.
     */
    private static ResolvedKey resolve(UUID id, KeyResolver resolver, Function<String, String> unchecked, String where,
                                       Outcome o) {
        try {
            ResolvedKey k = resolver.resolve(id);
            o.known().add(id);
            return k;
        } catch (KeyAccessException e) {
            if (e.reason() == KeyAccessException.Reason.KMS_UNAVAILABLE) {
                String w = unchecked.apply(e.getMessage());
                o.warnings().add(w);
                o.unchecked().add(w);
                return null;
            }
            if (e.reason() == KeyAccessException.Reason.UNKNOWN_KEY) {
                o.unknown().add(id);
            }
            throw new ConfigException(where + ": " + e.getMessage());
        }
    }

    private static void checkKey(CollectionPolicy cp, KeyResolver resolver, String where, Outcome o) {
        ResolvedKey k = resolve(cp.keyId(), resolver, why -> where + ": key " + cp.keyId() + " could not be checked: "
                + why + "; requests for " + cp.namespace() + " are refused until the KMS answers", where, o);
        if (k == null) {
            return;
        }
        CipherAlgorithm alg = k.key().algorithm();
        CipherSuite suite = CollectionKeys.suiteFor(cp, alg);
        if (suite.algorithm() != alg) {
            throw new ConfigException(where + ": suite " + suite + " needs a " + suite.algorithm() + " key, but key "
                    + cp.keyId() + " is " + alg + "-" + k.key().bits());
        }
        if (alg == CipherAlgorithm.TRIPLE_DES) {
            o.warnings().add(where + " uses 3DES: for comparison and legacy data only (NIST withdrew it for encryption "
                    + "after 2023); prefer AES or ARIA");
        }
        if (!k.state().mayEncrypt()) {
            o.warnings().add(where + ": key " + cp.keyId() + " is " + k.state() + ", so writes to " + cp.namespace()
                    + " are refused" + (k.state().mayDecrypt() ? " (reads still work)" : " and so are reads"));
        }
    }

    /**
     * A previous key only opens envelopes, each by the suite its header names, so any algorithm
     * will do (a rotation may change cipher); it must exist and its state must allow decryption.
     */
    private static void checkPreviousKey(CollectionPolicy cp, UUID id, KeyResolver resolver, String where, Outcome o) {
        ResolvedKey k = resolve(id, resolver, why -> where + ": previous key " + id + " could not be checked: " + why
                + "; envelopes under it in " + cp.namespace() + " cannot be read until the KMS answers",
                where + ".previousKeys", o);
        if (k == null) {
            return;
        }
        if (!k.state().mayDecrypt()) {
            o.warnings().add(where + ": previous key " + id + " is " + k.state() + ", so envelopes under it in "
                    + cp.namespace() + " cannot be read");
        }
    }
}
