package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonUndefined;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** MongoDB's order of BSON values, as distinct's values come back from the server. */
class BsonOrderTest {
    private static List<BsonValue> sorted(BsonValue... values) {
        TreeSet<BsonValue> set = new TreeSet<>(BsonOrder.COMPARATOR);
        set.addAll(List.of(values));
        return new ArrayList<>(set);
    }

    @Test
    void typesComeInTheServersOrder() {
        BsonValue[] ordered = {new BsonMinKey(), BsonNull.VALUE, new BsonInt32(5), new BsonString("a"),
                new BsonDocument("a", new BsonInt32(1)), new BsonArray(List.of(new BsonInt32(1))),
                new BsonBinary(new byte[] {1}), new BsonObjectId(new ObjectId()), BsonBoolean.FALSE,
                new BsonDateTime(0), new BsonMaxKey()};
        List<BsonValue> shuffled = new ArrayList<>(List.of(ordered));
        java.util.Collections.reverse(shuffled);
        assertEquals(List.of(ordered), sorted(shuffled.toArray(new BsonValue[0])));
    }

    @Test
    void numbersCompareByValueWhateverTheirTypeAndEqualOnesCountOnce() {
        List<BsonValue> out = sorted(new BsonInt32(33), new BsonDouble(11.5), new BsonInt64(22), new BsonInt32(11),
                new BsonDecimal128(Decimal128.parse("22.0")), new BsonDouble(Double.NaN),
                new BsonDouble(Double.NEGATIVE_INFINITY), new BsonInt64(Long.MAX_VALUE));
        assertEquals(List.of(new BsonDouble(Double.NaN), new BsonDouble(Double.NEGATIVE_INFINITY), new BsonInt32(11),
                new BsonDouble(11.5), new BsonInt64(22), new BsonInt32(33), new BsonInt64(Long.MAX_VALUE)), out);
    }

    @Test
    void stringsCompareByTheirUtf8Bytes() {
        // U+FF21 (3 UTF-8 bytes) sorts before U+1F600 (4 bytes, a surrogate pair in UTF-16, which Java would put first)
        List<BsonValue> out = sorted(new BsonString("\uD83D\uDE00"), new BsonString("\uFF21"), new BsonString("b"),
                new BsonString("B"), new BsonString("ab"));
        assertEquals(List.of(new BsonString("B"), new BsonString("ab"), new BsonString("b"), new BsonString("\uFF21"),
                new BsonString("\uD83D\uDE00")), out);
    }

    @Test
    void documentsCompareFieldByField() {
        BsonDocument a1 = BsonDocument.parse("{a: 1}");
        BsonDocument a1b = BsonDocument.parse("{a: 1, b: 0}");
        BsonDocument a2 = BsonDocument.parse("{a: 2}");
        BsonDocument b0 = BsonDocument.parse("{b: 0}");
        BsonDocument aStr = BsonDocument.parse("{a: 'x'}");
        // type before name: {b: 0} (a number) comes before {a: "x"} (a string)
        assertEquals(List.of(a1, a1b, a2, b0, aStr), sorted(b0, aStr, a2, a1b, a1));
        assertTrue(BsonOrder.compare(new BsonBinary(new byte[] {9}), new BsonBinary(new byte[] {1, 1})) < 0,
                "binaries: the shorter first");
    }

    @Test
    void undefinedSortsBeforeNullAndIsNotEqualToIt() {
        // canonicalizeBSONType: undefined (and a missing value) rank 0, null 5
        assertTrue(BsonOrder.compare(new BsonUndefined(), BsonNull.VALUE) < 0);
        assertTrue(BsonOrder.compare(new BsonMinKey(), new BsonUndefined()) < 0);
        assertEquals(BsonOrder.rank(BsonType.NULL) + BsonOrder.rank(BsonType.UNDEFINED), 5);
    }

    @Test
    void negativeZeroDecimalEqualsZero() {
        // the driver refuses to turn Decimal128 -0 into a BigDecimal; MongoDB compares it equal to 0
        assertEquals(0, BsonOrder.compare(new BsonDecimal128(Decimal128.NEGATIVE_ZERO), new BsonInt32(0)));
        assertEquals(0, BsonOrder.compare(new BsonDouble(-0.0), new BsonDecimal128(Decimal128.POSITIVE_ZERO)));
    }
}
