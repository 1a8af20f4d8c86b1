package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import org.bson.BsonBinary;
import org.bson.BsonValue;

/** One encrypted collection during one message: its policy, its paths, its keys. */
final class CollectionContext {
    final CollectionPolicy policy;
    final EncryptedPaths paths;
    final RequestKeys keys;

    CollectionContext(CollectionPolicy policy, EncryptedPaths paths, RequestKeys keys) {
        this.policy = policy;
        this.paths = paths;
        this.keys = keys;
    }

    String ns() {
        return policy.namespace();
    }

    /** A value as stored: its envelope, under the collection's key, randomized or deterministic per the field. */
    BsonBinary encrypt(FieldRule rule, BsonValue value) {
        return seal(keys.sealing(policy, rule.deterministic()), value);
    }

    /** A query value, deterministic, so that it equals what the field's equal values were stored as. */
    BsonBinary encryptForQuery(BsonValue value) {
        return seal(keys.querying(policy), value);
    }

    /** The envelope of a value given as its BSON type and value bytes, buf[start, end). */
    byte[] encryptBytes(FieldRule rule, byte type, byte[] buf, int start, int end) {
        return keys.sealing(policy, rule.deterministic()).encrypt(type, buf, start, end - start);
    }

    private BsonBinary seal(FieldCipher fc, BsonValue value) {
        BsonValueBytes b = BsonValueBytes.of(value);
        return EnvelopeBinary.wrap(fc.encrypt(b.type(), b.bytes()), policy.subtype());
    }
}
