package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.ResolvedKey;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a parsed policy against the KMS: every key exists, is unique and of an algorithm the suite
 * supports. Definitive problems are configuration errors; an unreachable KMS or a key that is not
 * Active only warn (requests for those collections are refused until it is fixed). Fetching the
 * keys here also warms the cache, so the data path starts with every key in memory.
 */
public final class PolicyValidator {
    private PolicyValidator() {
    }

    /** Warnings to log; throws ConfigException on a definitive problem. */
    public static List<String> validate(Policy policy, KeyResolver resolver, String source) {
        List<String> warnings = new ArrayList<>();
        for (CollectionPolicy cp : policy.collections().values()) {
            String where = source + ": collections." + cp.namespace();
            ResolvedKey k;
            try {
                k = resolver.resolve(cp.keyId());
            } catch (KeyAccessException e) {
                if (e.reason() == KeyAccessException.Reason.KMS_UNAVAILABLE) {
                    warnings.add(where + ": key " + cp.keyId() + " could not be checked: " + e.getMessage()
                            + "; requests for " + cp.namespace() + " are refused until the KMS answers");
                    continue;
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
        return warnings;
    }
}
