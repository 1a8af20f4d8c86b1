package dev.fleproxy.rewrap;

import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.policy.CollectionPolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/** Builds a run's ciphers from the key resolver, as the proxy resolves keys. */
public final class Rewraps {
    private Rewraps() {
    }

    /**
     * The collection's key (it must be Active: it seals) and every previous key (Active or
     * Deactivated: they only open). Blocks on the KMS when a key is not in the resolver's memory;
     * an unreachable KMS past the outage window is a KeyAccessException (KMS_UNAVAILABLE).
     */
    public static DocumentRewrap ciphers(CollectionPolicy cp, KeyResolver resolver, Adoption adoption) {
        DataKey key = resolver.forEncryption(cp.keyId());
        Map<UUID, DataKey> opening = new LinkedHashMap<>();
        opening.put(key.id(), key);
        for (UUID previous : cp.previousKeys()) {
            opening.put(previous, resolver.forDecryption(previous));
        }
        return new DocumentRewrap(cp, key, opening, adoption);
    }
}
