package dev.fleproxy.rewrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Envelopes rewrap must not seal again (issue 26): under a key that is not the collection's,
 * bound to another namespace or field, cut, or opening to no valid BSON value. Only what opens
 * under the collection's keys in its own field is re-encrypted.
 */
class DocumentRewrapTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String NS = "t.c";
    private static final DataKey KEY = key();
    private static final DataKey PREVIOUS = key();
    private static final CollectionPolicy POLICY = new CollectionPolicy(NS, KEY.id(), List.of(PREVIOUS.id()), null,
            false, Map.of("name", new FieldRule("name", false), "other", new FieldRule("other", false)),
            EnvelopeBinary.GENERIC, false);
    private static final BsonString NAME = new BsonString("Ada");

    private static DataKey key() {
        byte[] m = new byte[32];
        RANDOM.nextBytes(m);
        return new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, m);
    }

    private static BsonBinary seal(DataKey key, String ns, String path, BsonValue v) {
        BsonValueBytes b = BsonValueBytes.of(v);
        return EnvelopeBinary.wrap(FieldCipher.create(key, CipherSuite.AES_GCM, false).encrypt(b.type(), b.bytes(),
                Envelope.context(ns, path)), EnvelopeBinary.GENERIC);
    }

    /** The one field "name" of a document holding this value, as planned under --adopt-plaintext. */
    private static DocumentRewrap.Field plan(BsonValue value) {
        DocumentRewrap rewrap = new DocumentRewrap(POLICY, KEY, Map.of(KEY.id(), KEY, PREVIOUS.id(), PREVIOUS),
                new Adoption(POLICY, true, Set.of()));
        List<DocumentRewrap.Field> fields = rewrap.plan(new BsonDocument("_id", new BsonInt32(1)).append("name", value));
        assertEquals(1, fields.size());
        return fields.get(0);
    }

    private static void left(Category expected, BsonValue value) {
        DocumentRewrap.Field f = plan(value);
        assertEquals(expected, f.category());
        assertNull(f.replacement(), "left as it is");
    }

    @Test
    void anEnvelopeUnderAKeyOutsideKeyAndPreviousKeysIsUnknownKey() {
        left(Category.UNKNOWN_KEY, seal(key(), NS, "name", NAME));
    }

    @Test
    void anEnvelopeBoundToAnotherNamespaceOrFieldIsUnreadable() {
        left(Category.UNREADABLE, seal(KEY, "t.elsewhere", "name", NAME));
        left(Category.UNREADABLE, seal(KEY, NS, "other", NAME));
        left(Category.UNREADABLE, seal(PREVIOUS, NS, "other", NAME));
    }

    @Test
    void aCutEnvelopeIsUnreadableAtEveryLength() {
        byte[] whole = seal(KEY, NS, "name", NAME).getData();
        for (int len = 1; len < whole.length; len++) {
            left(Category.UNREADABLE, new BsonBinary(Arrays.copyOf(whole, len)));
        }
    }

    @Test
    void anEnvelopeOpeningToNoValidBsonValueIsUnreadable() {
        // a string whose length prefix does not match its bytes: reads refuse it, so sealing it again would not help
        byte[] bad = {9, 0, 0, 0, 'x', 0};
        byte[] env = FieldCipher.create(KEY, CipherSuite.AES_GCM, false).encrypt((byte) 0x02, bad,
                Envelope.context(NS, "name"));
        left(Category.UNREADABLE, new BsonBinary(env));
    }

    @Test
    void whatOpensUnderAPreviousKeyInItsOwnFieldIsSealedAgain() {
        DocumentRewrap.Field f = plan(seal(PREVIOUS, NS, "name", NAME));
        assertEquals(Category.PREVIOUS_KEY, f.category());
        assertNotNull(f.replacement());
        assertEquals(KEY.id(), Envelope.parse(EnvelopeBinary.unwrap(f.replacement())).keyId());
    }

    @Test
    void plaintextIsSealedOnlyWhenAdopted() {
        assertEquals(Category.PLAINTEXT, plan(NAME).category());
        DocumentRewrap denied = new DocumentRewrap(POLICY, KEY, Map.of(KEY.id(), KEY), new Adoption(POLICY, false,
                Set.of()));
        DocumentRewrap.Field f = denied.plan(new BsonDocument("name", NAME)).get(0);
        assertEquals(Category.PLAINTEXT_DENIED, f.category());
        assertNull(f.replacement());
        left(Category.NOT_ADOPTABLE, new BsonDocument("first", NAME));
        left(Category.NOT_ADOPTABLE, new BsonBinary(new byte[] {0, 1, 2}));
    }
}
