package dev.fleproxy.rewrite.paths;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The contexts of the encrypted collections a message names, on the encrypted-path trees of the
 * policy in force, built once per policy (a reload makes new ones).
 */
public final class CollectionContexts {
    private final Supplier<Policy> policy;
    private volatile PolicyPaths paths = new PolicyPaths(Policy.EMPTY);

    private record PolicyPaths(Policy policy, Map<CollectionPolicy, EncryptedPaths> byCollection) {
        PolicyPaths(Policy policy) {
            this(policy, new IdentityHashMap<>());
            policy.collections().values().forEach(cp -> byCollection.put(cp, new EncryptedPaths(cp)));
        }
    }

    public CollectionContexts(Supplier<Policy> policy) {
        this.policy = policy;
    }

    /** The collection during one message: its policy, its paths, its keys. */
    public CollectionContext of(CollectionPolicy cp, CollectionKeys keys) {
        PolicyPaths pp = paths;
        EncryptedPaths ep = pp.byCollection().get(cp);
        if (ep == null) {
            pp = new PolicyPaths(policy.get());
            paths = pp;
            ep = pp.byCollection().get(cp);
            if (ep == null) {
                ep = new EncryptedPaths(cp); // a policy swapped in between: correct, built once more
            }
        }
        return new CollectionContext(cp, ep, keys);
    }
}
