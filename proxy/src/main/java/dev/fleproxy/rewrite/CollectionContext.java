package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import org.bson.BsonBinary;
import org.bson.BsonValue;

/** One encrypted collection during one request: its policy, its paths, its keys. */
final class CollectionContext {
    final CollectionPolicy policy;
    final EncryptedPaths paths;
    private final Keyring keyring;

    CollectionContext(CollectionPolicy policy, Keyring keyring) {
        this.policy = policy;
        this.paths = new EncryptedPaths(policy);
        this.keyring = keyring;
    }

    String ns() {
        return policy.namespace();
    }

    /** A value as stored: its envelope, under the collection's key, randomized or deterministic per the field. */
    BsonBinary encrypt(FieldRule rule, BsonValue value) {
        return seal(keyring.forEncryption(policy, rule.deterministic()), value);
    }

    /** A query value, deterministic, so that it equals what the field's equal values were stored as. */
    BsonBinary encryptForQuery(BsonValue value) {
        return seal(keyring.forQuery(policy), value);
    }

    private BsonBinary seal(FieldCipher fc, BsonValue value) {
        BsonValueBytes b = BsonValueBytes.of(value);
        return EnvelopeBinary.wrap(fc.encrypt(b.type(), b.bytes()), policy.subtype());
    }
}
