package dev.fleproxy.rewrap;

import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.CryptoException;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.rewrite.search.SearchTags;
import dev.fleproxy.wire.BsonCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BSONException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * What one document needs: for each policy field present, whether its value is a current
 * envelope, and if not, the value it becomes (docs/envelope-format.md: v2, the collection's key, suite and the
 * field's variant, bound to namespace and field). Every envelope is opened, current ones too, so a
 * run also finds values that fail authentication. Only what opens under the collection's keys in
 * this field, and plaintext {@link Adoption} accepts, is sealed: anything else stays as it is.
 * Nothing else in the document is looked at.
 */
public final class DocumentRewrap {
    /**
     * One policy field of the document: where, what it holds now, what it becomes (null: stays);
     * for a range-indexed field that opened, its plaintext, which its tags are made from.
     */
    record Field(String path, BsonValue old, BsonValue replacement, Category category, FieldCipher.Plaintext plain) {
        Field(String path, BsonValue old, BsonValue replacement, Category category) {
            this(path, old, replacement, category, null);
        }
    }

    /** As deep as a stored value can be checked (the proxy's readers use the same bound). */
    private static final int MAX_DEPTH = 1000;

    private final CollectionPolicy policy;
    private final CipherSuite suite;
    private final FieldCipher randomized;
    private final FieldCipher deterministic;
    /** The keys that may open this collection's envelopes: its key and its previous keys. */
    private final Map<UUID, DataKey> opening;
    /** Opening ciphers, made once per key, suite and variant. */
    private final Envelopes ciphers = new Envelopes();
    private final Adoption adoption;
    /** The collection's key: range index tags are made under it. */
    private final DataKey key;

    /** @param key the collection's key (Active); opening: it and every previous key (Active or Deactivated) */
    DocumentRewrap(CollectionPolicy policy, DataKey key, Map<UUID, DataKey> opening, Adoption adoption) {
        this.policy = policy;
        this.adoption = adoption;
        this.key = key;
        this.suite = CollectionKeys.suiteFor(policy, key.algorithm());
        this.randomized = FieldCipher.create(key, suite, false);
        this.deterministic = FieldCipher.create(key, suite, true);
        this.opening = Map.copyOf(opening);
    }

    /** The policy fields the document holds, each with its category and, if rewritten, its new value. */
    List<Field> plan(BsonDocument doc) {
        List<Field> out = new ArrayList<>();
        if (policy.allFields()) {
            for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
                if (!e.getKey().equals("_id")) {
                    out.add(field(e.getKey(), false, e.getValue()));
                }
            }
            return out;
        }
        for (FieldRule rule : policy.fields().values()) {
            BsonValue v = at(doc, rule.path());
            if (v != null) {
                out.add(field(rule.path(), rule.deterministic(), v));
            }
        }
        for (FieldRule rule : policy.searchIndexed()) {
            Field tags = tags(doc, rule, out);
            if (tags != null) {
                out.add(tags);
            }
        }
        return out;
    }

    /**
     * The field's range index tags, when the document does not hold the ones its value gives under
     * the collection's key (none yet, or another key's): written, on the condition that the value
     * is still the one they were made from. Null when they are right, or the value did not open.
     */
    private Field tags(BsonDocument doc, FieldRule rule, List<Field> fields) {
        Field value = null;
        for (Field f : fields) {
            if (f.path().equals(rule.path())) {
                value = f;
            }
        }
        BsonArray want;
        SearchTags.FieldTags t = SearchTags.FieldTags.of(rule, key, policy.namespace());
        if (value == null) {
            want = SearchTags.absent(rule, t);
        } else if (value.plain() != null) {
            byte[] b = value.plain().value();
            want = SearchTags.stored(rule, t, value.plain().bsonType(), b, 0, b.length);
        } else {
            return null; // skipped (unreadable, unknown key …): its tags stay as they are
        }
        String path = SearchTags.path(rule.path());
        BsonValue now = at(doc, path);
        if (want.equals(now)) {
            return null;
        }
        return new Field(path, now == null ? BsonNull.VALUE : now, want, Category.TAGS);
    }

    /** The value at a dotted path through sub-documents, or null. */
    static BsonValue at(BsonDocument doc, String path) {
        BsonValue v = doc;
        for (String part : path.split("\\.")) {
            if (!v.isDocument()) {
                return null;
            }
            v = v.asDocument().get(part);
            if (v == null) {
                return null;
            }
        }
        return v;
    }

    private Field field(String path, boolean det, BsonValue value) {
        byte[] context = Envelope.context(policy.namespace(), path);
        byte[] envelope = EnvelopeBinary.unwrap(value);
        FieldCipher target = det ? deterministic : randomized;
        if (envelope == null) {
            Category c = adoption.of(path, value);
            if (c != Category.PLAINTEXT) {
                return new Field(path, value, null, c);
            }
            BsonValueBytes b = BsonValueBytes.of(value);
            return new Field(path, value, seal(target, b.type(), b.bytes(), context), Category.PLAINTEXT,
                    new FieldCipher.Plaintext(b.type(), b.bytes()));
        }
        Envelope.Header h;
        try {
            h = Envelope.parse(envelope);
        } catch (CryptoException e) {
            return new Field(path, value, null, Category.UNREADABLE);
        }
        boolean underKey = h.keyId().equals(policy.keyId());
        boolean current = underKey && h.format() == Envelope.FORMAT_V2 && h.suite() == suite && h.deterministic() == det;
        DataKey key = opening.get(h.keyId());
        if (key == null) {
            return new Field(path, value, null, Category.UNKNOWN_KEY);
        }
        FieldCipher.Plaintext p;
        try {
            p = ciphers.cipher(key, h.suite(), h.deterministic()).decrypt(envelope, context);
            // reads refuse an envelope that opens to no valid BSON value: sealing it again would not mend it
            BsonCursor.validate(p.bsonType(), p.value(), 0, p.value().length, MAX_DEPTH);
        } catch (CryptoException | BSONException e) {
            return new Field(path, value, null, Category.UNREADABLE);
        }
        if (current) {
            // opened all the same: a run is also a check that every stored value authenticates
            return new Field(path, value, null, Category.CURRENT, p);
        }
        Category c = !underKey ? Category.PREVIOUS_KEY
                : h.format() == Envelope.FORMAT_V1 && h.suite() == suite && h.deterministic() == det ? Category.V1
                : Category.OTHER_SUITE;
        return new Field(path, value, seal(target, p.bsonType(), p.value(), context), c, p);
    }

    private BsonValue seal(FieldCipher fc, byte type, byte[] value, byte[] context) {
        return EnvelopeBinary.wrap(fc.encrypt(type, value, context), policy.subtype());
    }
}
