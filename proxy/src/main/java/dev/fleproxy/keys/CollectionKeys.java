package dev.fleproxy.keys;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.CryptoException;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Where the policy meets the ciphers, once: the suite a collection writes with ({@link #suiteFor}),
 * the key-state rules, and the keys of one message, from the resolver's memory only: never a KMS
 * round trip here. A key not in memory is noted as pending (the message then waits for {@link
 * #fetchPending} and is handled again), unless the message has already waited its time: then it is
 * unavailable. State rules: encryption needs an Active key, decryption and equality queries an
 * Active or Deactivated one. A key that cannot be used becomes a {@link Refusal} naming the
 * namespace. The rewriting, rewrap and the policy's key check all choose suites here.
 */
public final class CollectionKeys implements Envelopes.KeyLookup {
    private final KeyResolver resolver;
    private final Envelopes envelopes;
    private final boolean waitExpired;
    private final Duration kmsWait;
    private Set<UUID> pending = Set.of();
    /** The namespace refusals of decryption name. */
    private String ns = "";
    /** The last key looked up, so the fields of one document cost one cache lookup, not one each. */
    private UUID lastId;
    private ResolvedKey last;
    /** The last sealing cipher handed out, and for what. */
    private CollectionPolicy sealedFor;
    private boolean sealedDeterministic;
    private FieldCipher sealer;

    public CollectionKeys(KeyResolver resolver, Envelopes envelopes, boolean waitExpired, Duration kmsWait) {
        this.resolver = resolver;
        this.envelopes = envelopes;
        this.waitExpired = waitExpired;
        this.kmsWait = kmsWait;
    }

    /** Names the namespace in the refusals of decryption that follow. */
    public CollectionKeys about(String namespace) {
        this.ns = namespace;
        return this;
    }

    /** Notes a key this message will need; false if it must be fetched first. */
    public boolean need(UUID id) {
        try {
            return resolved(id, ns) != null;
        } catch (Refusal cannotBeUsed) {
            return true; // known, and unusable: the rewriting says so where it needs it
        }
    }

    public boolean hasPending() {
        return !pending.isEmpty();
    }

    /** Fetches what this message found missing; completes when each has an answer. */
    public CompletableFuture<Void> fetchPending() {
        return resolver.fetch(pending);
    }

    /** The cached key, or null (noted as pending); a key the message may no longer wait for is a refusal. */
    private ResolvedKey resolved(UUID id, String where) {
        if (id.equals(lastId)) {
            return last;
        }
        ResolvedKey k;
        try {
            k = resolver.cached(id);
        } catch (KeyAccessException e) {
            throw new Refusal(ProxyError.KEY_UNAVAILABLE, where + ": " + e.getMessage());
        }
        if (k == null) {
            if (waitExpired) {
                throw new Refusal(ProxyError.KEY_UNAVAILABLE, where + ": key " + id + " is not in memory and "
                        + resolver.describeSource() + " did not deliver it within " + kmsWait.toMillis() + " ms");
            }
            if (pending.isEmpty()) {
                pending = new LinkedHashSet<>(2);
            }
            pending.add(id);
            return null;
        }
        lastId = id;
        last = k;
        return k;
    }

    @Override
    public DataKey decryptionKey(UUID id) {
        ResolvedKey k = resolved(id, ns + ": cannot decrypt");
        return k == null ? null : checked(k, false, ns + ": cannot decrypt").key();
    }

    /** The cipher that writes the collection's new values: its key must be Active. */
    public FieldCipher sealing(CollectionPolicy p, boolean deterministic) {
        if (p != sealedFor || deterministic != sealedDeterministic) {
            sealer = cipher(p, deterministic, true);
            sealedFor = p;
            sealedDeterministic = deterministic;
        }
        return sealer;
    }

    /** The cipher of equality queries: deterministic, and a Deactivated key still finds what it encrypted. */
    public FieldCipher querying(CollectionPolicy p) {
        return cipher(p, true, false);
    }

    /**
     * The equality ciphers of a collection whose key is changing: its key's, then each previous
     * key's with that key's algorithm's default suite (what the proxy wrote under it). Every one
     * must be usable: a query that silently skipped a key would miss the documents still under it.
     */
    public java.util.List<FieldCipher> queryingUnderEveryKey(CollectionPolicy p) {
        java.util.List<FieldCipher> out = new java.util.ArrayList<>(1 + p.previousKeys().size());
        out.add(querying(p));
        boolean missing = false;
        for (UUID id : p.previousKeys()) {
            ResolvedKey k = resolved(id, p.namespace() + ": previous key");
            if (k == null) {
                missing = true;
                continue;
            }
            DataKey key = checked(k, false, p.namespace() + ": previous key").key();
            try {
                out.add(envelopes.cipher(key, CipherSuite.defaultFor(key.algorithm()), true));
            } catch (CryptoException e) {
                throw new Refusal(ProxyError.KEY_UNAVAILABLE, p.namespace() + ": previous key " + id + ": " + e.getMessage());
            }
        }
        if (missing) {
            throw new KeysPending();
        }
        return out;
    }

    /**
     * The suite a collection's new values are written with: the one its policy names, else the
     * default of its key's algorithm. (Whether they match is the policy key check's business.)
     */
    public static CipherSuite suiteFor(CollectionPolicy p, CipherAlgorithm keyAlgorithm) {
        return p.suite() != null ? p.suite() : CipherSuite.defaultFor(keyAlgorithm);
    }

    private FieldCipher cipher(CollectionPolicy p, boolean deterministic, boolean encrypt) {
        ResolvedKey k = resolved(p.keyId(), p.namespace());
        if (k == null) {
            throw new KeysPending();
        }
        DataKey key = checked(k, encrypt, p.namespace()).key();
        try {
            return envelopes.cipher(key, suiteFor(p, key.algorithm()), deterministic);
        } catch (CryptoException e) {
            throw new Refusal(ProxyError.KEY_UNAVAILABLE, p.namespace() + ": " + e.getMessage());
        }
    }

    private static ResolvedKey checked(ResolvedKey k, boolean encrypt, String where) {
        try {
            return k.usableTo(encrypt);
        } catch (KeyAccessException e) {
            throw new Refusal(ProxyError.KEY_UNAVAILABLE, where + ": " + e.getMessage());
        }
    }

    public Envelopes envelopes() {
        return envelopes;
    }
}
