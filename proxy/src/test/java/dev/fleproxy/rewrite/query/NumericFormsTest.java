package dev.fleproxy.rewrite.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.evaluate.BsonOrder;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.bson.BsonDecimal128;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;

/**
 * The forms a deterministic field's numeric equality asks for: each equal to the value by the
 * evaluator's comparison (which follows compare_numbers.h), each once, and none missing at the
 * edges of int32, int64, double precision and the decimal128 range.
 */
class NumericFormsTest {

    private static BsonDecimal128 dec(String s) {
        return new BsonDecimal128(Decimal128.parse(s));
    }

    /** The forms, checked for what every set of forms must be; returned for the test's own checks. */
    private static List<BsonValue> forms(BsonValue v) {
        List<BsonValue> forms = NumericForms.of(v);
        assertSame(v, forms.get(0), "the value's own form first");
        Set<String> seen = new HashSet<>();
        for (BsonValue f : forms) {
            BsonValueBytes b = BsonValueBytes.of(f);
            assertTrue(seen.add(b.type() + ":" + HexFormat.of().formatHex(b.bytes())), "twice: " + f);
            assertEquals(0, BsonOrder.compare(v, f), f + " is not equal to " + v);
        }
        return forms;
    }

    private static long count(List<BsonValue> forms, BsonType type) {
        return forms.stream().filter(f -> f.getBsonType() == type).count();
    }

    private static Set<String> decimals(List<BsonValue> forms) {
        return forms.stream().filter(BsonValue::isDecimal128).map(f -> f.asDecimal128().getValue().toString())
                .collect(Collectors.toSet());
    }

    @Test
    void aSmallIntegerIsEveryTypeAndEveryWayToWriteItAsADecimal() {
        for (BsonValue one : List.of(new BsonInt32(1), new BsonInt64(1), new BsonDouble(1.0), dec("1"), dec("1.00"))) {
            List<BsonValue> forms = forms(one);
            assertEquals(37, forms.size(), forms.toString());
            assertTrue(forms.contains(new BsonInt32(1)) && forms.contains(new BsonInt64(1))
                    && forms.contains(new BsonDouble(1.0)));
            Set<String> d = decimals(forms);
            assertEquals(34, d.size());
            assertTrue(d.containsAll(List.of("1", "1.0", "1.00", "1." + "0".repeat(33))), d.toString());
            assertTrue(NumericForms.several(one));
        }
    }

    @Test
    void int32AndInt64FormsOnlyWithinTheirRange() {
        List<BsonValue> min = forms(new BsonInt32(Integer.MIN_VALUE));
        assertEquals(1, count(min, BsonType.INT32));
        List<BsonValue> twoTo31 = forms(new BsonInt64(1L << 31));
        assertEquals(0, count(twoTo31, BsonType.INT32));
        assertTrue(twoTo31.contains(new BsonDouble(0x1p31)));
        assertEquals(3 + 24, twoTo31.size()); // int64, double, 25 decimals of a 10-digit number
        List<BsonValue> max = forms(new BsonInt64(Long.MAX_VALUE));
        assertEquals(0, count(max, BsonType.DOUBLE), "2^63-1 is not a double (it rounds to 2^63)");
        List<BsonValue> twoTo63 = forms(new BsonDouble(0x1p63));
        assertEquals(0, count(twoTo63, BsonType.INT64), "2^63 is past int64");
        assertEquals(1, count(forms(new BsonDouble(-0x1p63)), BsonType.INT64), "-2^63 is int64's least");
    }

    @Test
    void aDoubleFormOnlyWhenExact() {
        List<BsonValue> above53 = forms(new BsonInt64((1L << 53) + 1));
        assertEquals(0, count(above53, BsonType.DOUBLE), "2^53+1 is no double");
        assertEquals(1 + 19, above53.size()); // int64, 19 decimals of a 16-digit number
        List<BsonValue> at53 = forms(new BsonInt64(1L << 53));
        assertTrue(at53.contains(new BsonDouble(0x1p53)));
        List<BsonValue> big = forms(new BsonInt64(1L << 60));
        assertTrue(big.contains(new BsonDouble(0x1p60)), "2^60 is exactly a double");
    }

    @Test
    void fractionsAreNoIntegersAndBinaryFractionsNoDecimals() {
        List<BsonValue> tenth = forms(new BsonDouble(0.1));
        assertEquals(List.of(new BsonDouble(0.1)), tenth, "0.1 as a double has 55 digits: no decimal equals it");
        assertFalse(NumericForms.several(new BsonDouble(0.1)));
        List<BsonValue> decimalTenth = forms(dec("0.1"));
        assertEquals(0, count(decimalTenth, BsonType.DOUBLE), "the decimal 0.1 is no double");
        assertEquals(34, decimalTenth.size());
        for (BsonValue half : List.of(new BsonDouble(2.5), dec("2.5"), dec("2.50"))) {
            List<BsonValue> forms = forms(half);
            assertEquals(1 + 33, forms.size());
            assertTrue(forms.contains(new BsonDouble(2.5)));
            assertEquals(0, count(forms, BsonType.INT32) + count(forms, BsonType.INT64));
            assertTrue(decimals(forms).containsAll(List.of("2.5", "2.50")));
        }
    }

    @Test
    void zeroIsBothSignsOfEachTypeAndABoundedSetOfDecimalZeros() {
        for (BsonValue zero : List.of(new BsonDouble(-0.0), new BsonDouble(0.0), new BsonInt32(0),
                new BsonDecimal128(Decimal128.NEGATIVE_ZERO), dec("0.000"))) {
            List<BsonValue> forms = forms(zero);
            assertEquals(4 + 68, forms.size(), zero.toString());
            Set<Long> doubleBits = forms.stream().filter(BsonValue::isDouble)
                    .map(f -> Double.doubleToRawLongBits(f.asDouble().getValue())).collect(Collectors.toSet());
            assertEquals(Set.of(0L, Long.MIN_VALUE), doubleBits);
            Set<String> d = decimals(forms);
            assertTrue(d.containsAll(List.of("0", "-0", "0.0", "-0.00", "0E-33", "-0E-33")), d.toString());
            assertFalse(d.contains("0E-34") || d.contains("0E+1"), "outside the bound, as documented");
        }
    }

    @Test
    void nanIsTheUsualNaNsOfBothTypes() {
        for (BsonValue nan : List.of(new BsonDouble(Double.NaN), dec("NaN"))) {
            List<BsonValue> forms = NumericForms.of(nan);
            assertEquals(6, forms.size(), forms.toString());
            Set<String> bytes = forms.stream().filter(BsonValue::isDouble)
                    .map(f -> HexFormat.of().formatHex(BsonValueBytes.of(f).bytes())).collect(Collectors.toSet());
            assertEquals(Set.of("000000000000f87f", "000000000000f8ff"), bytes, "both signs survive to the bytes sealed");
            assertEquals(4, forms.stream().filter(f -> f.isDecimal128() && f.asDecimal128().getValue().isNaN()).count());
        }
    }

    @Test
    void infinitiesAreTheDoubleAndTheDecimalOfTheirSign() {
        assertEquals(List.of(new BsonDouble(Double.POSITIVE_INFINITY), dec("Infinity")),
                forms(new BsonDouble(Double.POSITIVE_INFINITY)));
        assertEquals(List.of(dec("-Infinity"), new BsonDouble(Double.NEGATIVE_INFINITY)), forms(dec("-Infinity")));
    }

    @Test
    void decimalsAtTheEdgesOfTheirRange() {
        assertEquals(34, forms(dec("1E+6111")).size(), "each exponent down from the largest");
        assertEquals(1, forms(dec("1E-6176")).size(), "no exponent below the least");
        assertEquals(1, forms(dec("1E+6144")).size(), "clamped: only 10^33 E+6111 holds it");
        assertEquals(1, forms(dec("1234567890123456789012345678901234")).size(), "34 digits: no room for a zero");
        List<BsonValue> big = forms(dec("12345678901234567890"));
        assertEquals(1 + 15, big.size(), "past int64, not a double, 15 decimals");
        List<BsonValue> negative = forms(new BsonInt32(-7));
        assertTrue(decimals(negative).containsAll(List.of("-7", "-7.0")));
    }

    @Test
    void anythingButANumberIsItsOnlyForm() {
        for (BsonValue v : List.of(new BsonString("1"), org.bson.BsonBoolean.TRUE,
                org.bson.BsonDocument.parse("{a: 1}"), org.bson.BsonArray.parse("[1]"))) {
            assertEquals(List.of(v), NumericForms.of(v));
            assertFalse(NumericForms.several(v));
        }
    }
}
