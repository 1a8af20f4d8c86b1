package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.wire.BsonBytes;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.bson.BSONException;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The direct string path gives exactly the bytes the driver's BSON writer gives, and back. */
class BsonValueBytesTest {

    @ParameterizedTest
    @ValueSource(strings = {"", "a", "héllo wörld", "日本語のテキスト", "emoji \uD83D\uDE00 and \u0000 inside"})
    void stringsEncodeAsTheDriverDoes(String s) {
        ByteBuffer doc = BsonBytes.encode(new BsonDocument("v", new BsonString(s)));
        byte[] whole = Arrays.copyOfRange(doc.array(), doc.arrayOffset(), doc.arrayOffset() + doc.remaining());
        byte[] driver = Arrays.copyOfRange(whole, 7, whole.length - 1); // after length, type, "v\0"; before the final NUL
        BsonValueBytes b = BsonValueBytes.of(new BsonString(s));
        assertEquals((byte) BsonType.STRING.getValue(), b.type());
        assertArrayEquals(driver, b.bytes());
        assertEquals(new BsonString(s), b.toBsonValue());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2, 4, 6})
    void aStringWithAWrongLengthIsABsonError(int length) {
        byte[] bytes = {(byte) length, 0, 0, 0, 'a', 'b', 0};
        assertThrows(BSONException.class, () -> new BsonValueBytes((byte) BsonType.STRING.getValue(), bytes).toBsonValue());
    }
}
