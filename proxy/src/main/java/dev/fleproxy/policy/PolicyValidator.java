package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.ResolvedKey;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Checks a parsed policy against the KMS: every key exists, is unique and of an algorithm the suite
 * supports; every previous key exists and may still decrypt. Definitive problems are configuration
 * errors; an unreachable KMS or a key that is not Active only warn (requests for those collections
 * are refused until it is fixed). Fetching the keys here also warms the cache, so the data path
 * starts with every key in memory.
 */
public final class PolicyValidator {
    private PolicyValidator() {
    }

    /** Warnings to log; throws ConfigException on a definitive problem. */
    public static List<String> validate(Policy policy, KeyResolver resolver, String source) {
        List<String> warnings = new ArrayList<>();
        for (CollectionPolicy cp : policy.collections().values()) {
            String where = source + ": collections." + cp.namespace();
            checkKey(cp, resolver, where, warnings);
            for (UUID previous : cp.previousKeys()) {
                checkPreviousKey(cp, previous, resolver, where, warnings);
            }
            // Said on every start and reload, so it is not forgotten once the migration is done.
            if (cp.plaintextReads()) {
                warnings.add(where + " has plaintextReads: allow: values of its policy fields that are not envelopes are "
                        + "returned as stored (meant only while data written before the policy is migrated)");
            }
        }
        return warnings;
    }

    private static void checkKey(CollectionPolicy cp, KeyResolver resolver, String where, List<String> warnings) {
        ResolvedKey k;
        try {
            k = resolver.resolve(cp.keyId());
        } catch (KeyAccessException e) {
            if (e.reason() == KeyAccessException.Reason.KMS_UNAVAILABLE) {
                warnings.add(where + ": key " + cp.keyId() + " could not be checked: " + e.getMessage()
                        + "; requests for " + cp.namespace() + " are refused until the KMS answers");
                return;
            }
            throw new ConfigException(where + ": " + e.getMessage());
        }
        CipherAlgorithm alg = k.key().algorithm();
        CipherSuite suite = cp.suite() != null ? cp.suite() : CipherSuite.defaultFor(alg);
        if (suite.algorithm() != alg) {
            throw new ConfigException(where + ": suite " + suite + " needs a " + suite.algorithm() + " key, but key "
                    + cp.keyId() + " is " + alg + "-" + k.key().bits());
        }
        if (alg == CipherAlgorithm.TRIPLE_DES) {
            warnings.add(where + " uses 3DES: for comparison and legacy data only (NIST withdrew it for encryption "
                    + "after 2023); prefer AES or ARIA");
        }
        if (!k.state().mayEncrypt()) {
            warnings.add(where + ": key " + cp.keyId() + " is " + k.state() + ", so writes to " + cp.namespace()
                    + " are refused" + (k.state().mayDecrypt() ? " (reads still work)" : " and so are reads"));
        }
    }

    /**
     * A previous key only opens envelopes, each by the suite its header names, so any algorithm
     * will do (a rotation may change cipher); it must exist and its state must allow decryption.
     */
    private static void checkPreviousKey(CollectionPolicy cp, UUID id, KeyResolver resolver, String where,
                                         List<String> warnings) {
        ResolvedKey k;
        try {
            k = resolver.resolve(id);
        } catch (KeyAccessException e) {
            if (e.reason() == KeyAccessException.Reason.KMS_UNAVAILABLE) {
                warnings.add(where + ": previous key " + id + " could not be checked: " + e.getMessage()
                        + "; envelopes under it in " + cp.namespace() + " cannot be read until the KMS answers");
                return;
            }
            throw new ConfigException(where + ".previousKeys: " + e.getMessage());
        }
        if (!k.state().mayDecrypt()) {
            warnings.add(where + ": previous key " + id + " is " + k.state() + ", so envelopes under it in "
                    + cp.namespace() + " cannot be read");
        }
    }
}
