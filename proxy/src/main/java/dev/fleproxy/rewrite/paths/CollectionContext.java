package dev.fleproxy.rewrite.paths;

import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import org.bson.BsonBinary;
import org.bson.BsonValue;

/** One encrypted collection during one message: its policy, its paths, its keys. */
public final class CollectionContext {
    public final CollectionPolicy policy;
    public final EncryptedPaths paths;
    public final CollectionKeys keys;
    /** Contexts of top-level fields under fields: "*", built per field into one buffer. */
    public final FieldContext topLevel;

    CollectionContext(CollectionPolicy policy, EncryptedPaths paths, CollectionKeys keys) {
        this.policy = policy;
        this.paths = paths;
        this.keys = keys;
        this.topLevel = new FieldContext(policy.namespace());
    }

    public String ns() {
        return policy.namespace();
    }

    /** The collection's encrypted paths, as expression checks ask about them. */
    public FieldPaths asPaths() {
        return new FieldPaths() {
            @Override
            public PathKind kind(String path) {
                return paths.classify(path).kind();
            }

            @Override
            public Refusal refuse(String path, String what) {
                EncryptedPaths.Match m = paths.classify(path);
                return Refusal.onField(ns(), m.rule() != null ? m.rule().path() : path, what);
            }
        };
    }

    /**
     * A value as stored: its envelope, under the collection's key, randomized or deterministic per
     * the field, bound to the field's path (the policy's path; under fields: "*" the top-level name).
     */
    public BsonBinary encrypt(FieldRule rule, BsonValue value) {
        return seal(keys.sealing(policy, rule.deterministic()), value, rule.path());
    }

    /** A query value, deterministic, so that it equals what the field's equal values were stored as. */
    public BsonBinary encryptForQuery(FieldRule rule, BsonValue value) {
        return seal(keys.querying(policy), value, rule.path());
    }

    /**
     * A query value's envelopes under the collection's key and each of its previous keys (each
     * with its algorithm's default suite), for equality while a key change is under way.
     */
    public java.util.List<BsonBinary> encryptForQueryUnderEveryKey(FieldRule rule, BsonValue value) {
        java.util.List<BsonBinary> out = new java.util.ArrayList<>();
        for (FieldCipher fc : keys.queryingUnderEveryKey(policy)) {
            out.add(seal(fc, value, rule.path()));
        }
        return out;
    }

    /**
     * The envelope of a value given as its BSON type and value bytes, buf[start, end), bound to the
     * context context[0, contextLength).
     */
    public byte[] encryptBytes(FieldRule rule, byte type, byte[] buf, int start, int end, byte[] context, int contextLength) {
        return keys.sealing(policy, rule.deterministic()).encrypt(type, buf, start, end - start, context, 0,
                contextLength);
    }

    /** The search tags a write stores for this field: under the key that seals its values. */
    public dev.fleproxy.rewrite.search.SearchTags.FieldTags fieldTags(FieldRule rule) {
        return dev.fleproxy.rewrite.search.SearchTags.FieldTags.of(rule, keys.sealing(policy, rule.deterministic()).key(),
                ns());
    }

    /** The text tags of one kind a query asks for: under the collection's key and each previous key. */
    public java.util.List<dev.fleproxy.crypto.TextTags> textTagsForQuery(FieldRule rule,
                                                                        dev.fleproxy.crypto.TextTags.Kind kind) {
        java.util.List<dev.fleproxy.crypto.TextTags> out = new java.util.ArrayList<>();
        for (FieldCipher fc : keys.queryingUnderEveryKey(policy)) {
            out.add(dev.fleproxy.crypto.TextTags.of(fc.key(), ns(), rule.path(), kind));
        }
        return out;
    }

    /**
     * The range tags a query asks for: under the collection's key and each previous key, since
     * until rewrap has passed a document its tags are its old key's.
     */
    public java.util.List<dev.fleproxy.crypto.RangeTags> rangeTagsForQuery(FieldRule rule) {
        java.util.List<dev.fleproxy.crypto.RangeTags> out = new java.util.ArrayList<>();
        for (FieldCipher fc : keys.queryingUnderEveryKey(policy)) {
            out.add(dev.fleproxy.crypto.RangeTags.of(fc.key(), ns(), rule.path()));
        }
        return out;
    }

    private BsonBinary seal(FieldCipher fc, BsonValue value, String path) {
        BsonValueBytes b = BsonValueBytes.of(value);
        byte[] context = Envelope.context(policy.namespace(), path);
        return EnvelopeBinary.wrap(fc.encrypt(b.type(), b.bytes(), context), policy.subtype());
    }
}
