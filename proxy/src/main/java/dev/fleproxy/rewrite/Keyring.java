package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.CryptoException;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.server.ProxyError;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * FieldCiphers by key, suite and variant, built once per fetched key (a re-fetched key gets a
 * new cipher; the old one is dropped). Keys come from the {@link KeyResolver}, whose state rules
 * decide: encryption needs an Active key, decryption and equality queries an Active or
 * Deactivated one.
 */
public final class Keyring {
    private record Slot(UUID id, CipherSuite suite, boolean deterministic) {
    }

    private record Held(DataKey key, FieldCipher cipher) {
    }

    private final KeyResolver resolver;
    private final Map<Slot, Held> ciphers = new ConcurrentHashMap<>();

    public Keyring(KeyResolver resolver) {
        this.resolver = resolver;
    }

    public KeyResolver resolver() {
        return resolver;
    }

    /** For writing new values: the collection's key must be Active. */
    FieldCipher forEncryption(CollectionPolicy p, boolean deterministic) {
        return cipher(p, key(p, true), deterministic);
    }

    /** For rewriting equality queries: a Deactivated key still finds the data it encrypted. */
    FieldCipher forQuery(CollectionPolicy p) {
        return cipher(p, key(p, false), true);
    }

    /** For an envelope read back: the key its header names, which may no longer be the policy's. */
    FieldCipher forDecryption(Envelope.Header h, String ns) {
        DataKey key;
        try {
            key = resolver.forDecryption(h.keyId());
        } catch (KeyAccessException e) {
            throw new Refusal(ProxyError.KEY_UNAVAILABLE, ns + ": cannot decrypt: " + e.getMessage());
        }
        return cipher(ns, key, h.suite(), false);
    }

    private DataKey key(CollectionPolicy p, boolean encrypt) {
        try {
            return encrypt ? resolver.forEncryption(p.keyId()) : resolver.forDecryption(p.keyId());
        } catch (KeyAccessException e) {
            throw new Refusal(ProxyError.KEY_UNAVAILABLE, p.namespace() + ": " + e.getMessage());
        }
    }

    private FieldCipher cipher(CollectionPolicy p, DataKey key, boolean deterministic) {
        CipherSuite suite = p.suite() != null ? p.suite() : CipherSuite.defaultFor(key.algorithm());
        return cipher(p.namespace(), key, suite, deterministic);
    }

    private FieldCipher cipher(String ns, DataKey key, CipherSuite suite, boolean deterministic) {
        Slot slot = new Slot(key.id(), suite, deterministic);
        Held held = ciphers.get(slot);
        if (held != null && held.key() == key) {
            return held.cipher();
        }
        try {
            FieldCipher fc = FieldCipher.create(key, suite, deterministic);
            ciphers.put(slot, new Held(key, fc));
            return fc;
        } catch (CryptoException e) {
            throw new Refusal(ProxyError.KEY_UNAVAILABLE, ns + ": " + e.getMessage());
        }
    }
}
