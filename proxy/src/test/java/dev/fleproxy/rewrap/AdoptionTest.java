package dev.fleproxy.rewrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.BsonUndefined;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Each kind of value that is not an envelope, under each mode (issue 26): what a client could
 * have written is adopted only where plaintext is expected; envelope-like binaries, sub-documents
 * and arrays outside --adopt-documents-in, and types drivers do not write are never sealed.
 */
class AdoptionTest {
    private static final CollectionPolicy DENY = policy(false, false);
    private static final CollectionPolicy ALLOW = policy(true, false);

    private static CollectionPolicy policy(boolean plaintextReads, boolean allFields) {
        return new CollectionPolicy("t.c", UUID.randomUUID(), List.of(), null, allFields, allFields ? Map.of()
                : Map.of("name", new FieldRule("name", false), "profile", new FieldRule("profile", false)),
                (byte) 0, plaintextReads);
    }

    private static final BsonValue SUB_DOCUMENT = new BsonDocument("first", new BsonString("Ada"));
    private static final BsonValue ARRAY = new BsonArray(List.of(new BsonString("a"), new BsonInt32(2)));
    private static final byte[] CUT = {(byte) 0x82, 0x01, 1, 2, 3, 4, 5, 6, 7, 8};

    private static BsonBinary binary(BsonBinarySubType subtype, byte... data) {
        return new BsonBinary(subtype, data);
    }

    @Test
    void plaintextAClientCouldHaveWrittenIsAdoptedOnlyWherePlaintextIsExpected() {
        List<BsonValue> scalars = List.of(new BsonString("Ada"), new BsonInt32(7), new BsonDateTime(0),
                BsonBoolean.TRUE, BsonNull.VALUE, binary(BsonBinarySubType.UUID_STANDARD, new byte[16]),
                binary(BsonBinarySubType.USER_DEFINED, (byte) 0));
        for (BsonValue v : scalars) {
            assertEquals(Category.PLAINTEXT_DENIED, new Adoption(DENY, false, Set.of()).of("name", v), v.toString());
            assertEquals(Category.PLAINTEXT, new Adoption(DENY, true, Set.of()).of("name", v), v.toString());
            assertEquals(Category.PLAINTEXT, new Adoption(ALLOW, false, Set.of()).of("name", v), v.toString());
        }
    }

    @Test
    void theRemainsOfAnEnvelopeAreUnreadableInEveryMode() {
        for (Adoption a : everyMode()) {
            assertEquals(Category.UNREADABLE, a.of("name", binary(BsonBinarySubType.BINARY, CUT)));
            assertEquals(Category.UNREADABLE, a.of("name", binary(BsonBinarySubType.ENCRYPTED, CUT)));
            // an envelope's first byte in a subtype envelopes are never stored in: still what is left of one
            assertEquals(Category.UNREADABLE, a.of("name", binary(BsonBinarySubType.USER_DEFINED, (byte) 0x81)));
        }
    }

    @Test
    void binariesOfTheEnvelopeSubtypesAreNeverAdopted() {
        for (Adoption a : everyMode()) {
            assertEquals(Category.NOT_ADOPTABLE, a.of("name", binary(BsonBinarySubType.BINARY, (byte) 0, (byte) 1)));
            assertEquals(Category.NOT_ADOPTABLE, a.of("name", binary(BsonBinarySubType.ENCRYPTED, (byte) 1, (byte) 1)));
            assertEquals(Category.NOT_ADOPTABLE, a.of("name", binary(BsonBinarySubType.BINARY)));
        }
    }

    @Test
    void subDocumentsAndArraysAreAdoptedOnlyInFieldsNamedAsHoldingThem() {
        for (Adoption a : everyMode()) {
            assertEquals(Category.NOT_ADOPTABLE, a.of("name", SUB_DOCUMENT));
            assertEquals(Category.NOT_ADOPTABLE, a.of("name", ARRAY));
        }
        Adoption named = new Adoption(DENY, true, Set.of("profile"));
        assertEquals(Category.PLAINTEXT, named.of("profile", SUB_DOCUMENT));
        assertEquals(Category.PLAINTEXT, named.of("profile", ARRAY));
        assertEquals(Category.NOT_ADOPTABLE, named.of("name", SUB_DOCUMENT));
        assertEquals(Category.PLAINTEXT, new Adoption(ALLOW, false, Set.of("profile")).of("profile", SUB_DOCUMENT));
        // an envelope-like binary anywhere inside: an envelope put into a value, never sealed
        BsonDocument carrying = new BsonDocument("a", new BsonArray(List.of(new BsonDocument("b",
                binary(BsonBinarySubType.BINARY, CUT)))));
        assertEquals(Category.NOT_ADOPTABLE, named.of("profile", carrying));
        assertEquals(Category.NOT_ADOPTABLE, named.of("profile", new BsonArray(List.of(
                binary(BsonBinarySubType.ENCRYPTED, (byte) 1)))));
        // a plain generic binary inside a value is the application's data: the proxy seals the value whole
        assertEquals(Category.PLAINTEXT, named.of("profile", new BsonDocument("img",
                binary(BsonBinarySubType.BINARY, (byte) 0))));
    }

    @Test
    void typesDriversDoNotWriteAsDataAreNeverAdopted() {
        for (BsonValue v : List.of(new BsonUndefined(), new BsonSymbol("s"), new BsonMinKey(), new BsonMaxKey())) {
            for (Adoption a : everyMode()) {
                assertEquals(Category.NOT_ADOPTABLE, a.of("name", v), v.toString());
            }
        }
    }

    @Test
    void documentFieldsMustBePolicyFieldsAndNeedAdoption() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new Adoption(DENY, true, Set.of("other")))
                .getMessage().contains("not a policy field of t.c"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new Adoption(DENY, false, Set.of("profile")))
                .getMessage().contains("add --adopt-plaintext"));
        CollectionPolicy every = policy(true, true);
        assertEquals(Category.PLAINTEXT, new Adoption(every, false, Set.of("anything")).of("anything", SUB_DOCUMENT));
        assertThrows(IllegalArgumentException.class, () -> new Adoption(every, false, Set.of("a.b")));
        assertThrows(IllegalArgumentException.class, () -> new Adoption(every, false, Set.of("_id")));
    }

    private static List<Adoption> everyMode() {
        return List.of(new Adoption(DENY, false, Set.of()), new Adoption(DENY, true, Set.of()),
                new Adoption(ALLOW, false, Set.of()));
    }
}
