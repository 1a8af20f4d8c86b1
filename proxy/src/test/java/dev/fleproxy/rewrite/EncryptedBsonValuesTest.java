package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import java.security.SecureRandom;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every BSON type through envelope and back, under every suite, stored as subtype 6 and as 0. */
class EncryptedBsonValuesTest {
    private static final byte[] CONTEXT = dev.fleproxy.crypto.Envelope.context("db.coll", "field");

    static final List<BsonValue> EVERY_TYPE = List.of(
            new BsonString("héllo, 세계"),
            new BsonString(""),
            new BsonInt32(-7),
            new BsonInt64(1L << 40),
            new BsonDouble(Math.PI),
            new BsonDecimal128(Decimal128.parse("1234.5678")),
            BsonBoolean.TRUE,
            new BsonDateTime(1_700_000_000_000L),
            BsonNull.VALUE,
            new BsonObjectId(new ObjectId("0123456789abcdef01234567")),
            new BsonBinary(new byte[] {0, 1, 2, (byte) 255}),
            new BsonBinary(BsonBinarySubType.UUID_STANDARD, new byte[16]),
            new BsonDocument("street", new BsonString("Main St 1")).append("zip", new BsonInt32(12345)),
            new BsonArray(List.of(new BsonString("+82 2 123"), new BsonInt32(2))),
            new BsonRegularExpression("^a.*z$", "i"),
            new BsonTimestamp(1_700_000_000, 7),
            new BsonJavaScript("function() { return 1; }"),
            new BsonMinKey(),
            new BsonMaxKey());

    @ParameterizedTest
    @EnumSource(CipherSuite.class)
    void everyTypeRoundTrips(CipherSuite suite) {
        CipherAlgorithm alg = suite.algorithm();
        byte[] k = new byte[alg == CipherAlgorithm.TRIPLE_DES ? 24 : 16];
        new SecureRandom().nextBytes(k);
        DataKey key = new DataKey(UUID.randomUUID(), alg, k);
        for (boolean det : new boolean[] {false, true}) {
            FieldCipher fc = FieldCipher.create(key, suite, det);
            for (byte subtype : new byte[] {EnvelopeBinary.ENCRYPTED, EnvelopeBinary.GENERIC}) {
                for (BsonValue v : EVERY_TYPE) {
                    BsonValueBytes plain = BsonValueBytes.of(v);
                    assertEquals((byte) v.getBsonType().getValue(), plain.type());
                    BsonBinary stored = EnvelopeBinary.wrap(fc.encrypt(plain.type(), plain.bytes(), CONTEXT), subtype);
                    assertEquals(subtype, stored.getType());

                    byte[] envelope = EnvelopeBinary.unwrap(stored);
                    FieldCipher.Plaintext back = fc.decrypt(envelope, CONTEXT);
                    assertArrayEquals(plain.bytes(), back.value());
                    assertEquals(v, new BsonValueBytes(back.bsonType(), back.value()).toBsonValue(), suite + " " + v);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CipherSuite.class, names = "AES_GCM")
    void onlyOurEnvelopesAreUnwrapped(CipherSuite suite) {
        assertNull(EnvelopeBinary.unwrap(new BsonString("plain")), "values stored before a policy stay plain");
        assertNull(EnvelopeBinary.unwrap(new BsonBinary(new byte[] {1, 2, 3})), "somebody else's binary");
        byte[] mongoCsfle = new byte[40];
        mongoCsfle[0] = 1; // MongoDB's own subtype-6 payloads start with 0-16
        assertNull(EnvelopeBinary.unwrap(new BsonBinary(BsonBinarySubType.ENCRYPTED, mongoCsfle)));
        assertThrows(IllegalArgumentException.class, () -> EnvelopeBinary.wrap(new byte[19], (byte) 5));
    }
}
