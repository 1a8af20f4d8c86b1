package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.icu.text.Collator;
import java.util.List;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * The examples of MongoDB's collation documentation (reference/collation), evaluated by the proxy's
 * evaluator with the ICU collator CollationSpec builds: each asserts what MongoDB documents.
 */
class CollationTest {
    private static Collator collator(String json) {
        return CollationSpec.collator(BsonDocument.parse(json));
    }

    private static int cmp(String json, String a, String b) {
        return StringOrder.under(collator(json), () -> Integer.signum(BsonOrder.compare(new BsonString(a), new BsonString(b))));
    }

    @Test
    void strengthOneIgnoresAccentsAndCase() {
        assertEquals(0, cmp("{locale: 'fr', strength: 1}", "cafe", "Café"));
        assertEquals(0, cmp("{locale: 'en', strength: 1}", "cafe", "CAFE"));
    }

    @Test
    void strengthTwoIgnoresCaseOnly() {
        assertEquals(0, cmp("{locale: 'en_US', strength: 2}", "PING", "ping"));
        assertTrue(cmp("{locale: 'en_US', strength: 2}", "cafe", "café") != 0);
    }

    @Test
    void theDefaultStrengthThreeTellsCase() {
        assertTrue(cmp("{locale: 'en'}", "ping", "PING") < 0); // lower before upper by default
        assertTrue(cmp("{locale: 'en'}", "PING", "pinh") < 0); // but letters first: not byte order
        assertTrue(StringOrder.bytes("PING", "pinh") < 0 && StringOrder.bytes("Z", "a") < 0);
        assertTrue(cmp("{locale: 'en'}", "Z", "a") > 0);
    }

    @Test
    void caseLevelWithStrengthOneTellsCaseButNotAccents() {
        assertEquals(0, cmp("{locale: 'fr', strength: 1, caseLevel: true}", "cafe", "café"));
        assertTrue(cmp("{locale: 'fr', strength: 1, caseLevel: true}", "cafe", "Cafe") != 0);
    }

    @Test
    void caseFirstUpperSortsUppercaseFirst() {
        assertTrue(cmp("{locale: 'en', caseFirst: 'upper'}", "A", "a") < 0);
        assertTrue(cmp("{locale: 'en', caseFirst: 'lower'}", "A", "a") > 0);
        assertTrue(cmp("{locale: 'en', caseFirst: 'off'}", "A", "a") > 0);
    }

    @Test
    void numericOrderingComparesDigitsAsNumbers() {
        assertTrue(cmp("{locale: 'en', numericOrdering: true}", "10", "2") > 0);
        assertTrue(cmp("{locale: 'en', numericOrdering: false}", "10", "2") < 0);
    }

    @Test
    void alternateShiftedIgnoresSpaceAndPunctuation() {
        String punct = "{locale: 'en', alternate: 'shifted'}";
        assertEquals(0, cmp(punct, "black-bird", "blackbird"));
        assertEquals(0, cmp(punct, "black bird", "blackbird"));
        assertTrue(cmp("{locale: 'en'}", "black bird", "blackbird") != 0);
        String space = "{locale: 'en', alternate: 'shifted', maxVariable: 'space'}";
        assertEquals(0, cmp(space, "black bird", "blackbird"));
        assertTrue(cmp(space, "black-bird", "blackbird") != 0);
        // strength 4 tells the ignored characters apart again
        assertTrue(cmp("{locale: 'en', alternate: 'shifted', strength: 4}", "black-bird", "blackbird") != 0);
    }

    @Test
    void backwardsComparesAccentsFromTheEnd() {
        List<String> words = List.of("côté", "coté", "côte", "cote");
        assertEquals(List.of("cote", "coté", "côte", "côté"), sorted("{locale: 'fr'}", words));
        assertEquals(List.of("cote", "côte", "coté", "côté"), sorted("{locale: 'fr', backwards: true}", words));
        // fr_CA's default is backwards, kept when the document does not say
        assertEquals(List.of("cote", "côte", "coté", "côté"), sorted("{locale: 'fr_CA'}", words));
    }

    @Test
    void strengthFiveTellsApartWhatEquivalenceHides() {
        assertTrue(cmp("{locale: 'en', strength: 5, normalization: true}", "\u00e9", "e\u0301") == 0);
        assertTrue(cmp("{locale: 'en', strength: 5}", "a", "\uff41") != 0); // fullwidth a: tertiary difference
        assertEquals(0, cmp("{locale: 'en', strength: 2}", "a", "\uff41"));
    }

    @Test
    void filtersCompareStringsUnderTheCollation() {
        Collator c = collator("{locale: 'en_US', strength: 2}");
        BsonDocument ping = BsonDocument.parse("{_id: 1, x: 'ping'}");
        assertTrue(matches(c, "{x: 'PING'}", ping));
        assertTrue(matches(c, "{x: {$eq: 'PING'}}", ping));
        assertFalse(matches(c, "{x: {$ne: 'PING'}}", ping));
        assertTrue(matches(c, "{x: {$in: ['PONG', 'PiNg']}}", ping));
        assertFalse(matches(c, "{x: {$nin: ['PiNg']}}", ping));
        assertTrue(matches(c, "{x: {$gte: 'PING', $lte: 'PING'}}", ping));
        assertTrue(matches(c, "{x: {$lt: 'Q'}}", ping)); // by bytes 'ping' > 'Q'
        assertFalse(matches(null, "{x: {$lt: 'Q'}}", ping));
        assertTrue(matches(c, "{x: ['PING']}", BsonDocument.parse("{x: ['ping']}"))); // strings inside arrays too
        assertTrue(matches(c, "{d: {a: 'B'}}", BsonDocument.parse("{d: {a: 'b'}}"))); // and inside documents
        assertFalse(matches(c, "{d: {A: 'b'}}", BsonDocument.parse("{d: {a: 'b'}}"))); // not their field names
        assertFalse(matches(c, "{X: 'ping'}", ping)); // nor the filter's
        assertFalse(matches(c, "{x: {$regex: 'PING'}}", ping)); // nor regular expressions
        assertFalse(matches(null, "{x: 'PING'}", ping)); // no collation: bytes
    }

    @Test
    void sortsGroupsAndDistinctFollowTheCollation() {
        Collator c = collator("{locale: 'en', strength: 2}");
        List<BsonDocument> docs = List.of(BsonDocument.parse("{_id: 1, x: 'b'}"), BsonDocument.parse("{_id: 2, x: 'B'}"),
                BsonDocument.parse("{_id: 3, x: 'a'}"), BsonDocument.parse("{_id: 4, x: 'C'}"));
        List<BsonDocument> sorted = StringOrder.under(c, () -> DocumentSort.compile(BsonDocument.parse("{x: 1}")).sort(docs));
        assertEquals(List.of(3, 1, 2, 4), sorted.stream().map(d -> d.getInt32("_id").getValue()).toList()); // b, B tie: input order
        List<BsonValue> distinct = StringOrder.under(c, () -> DistinctValues.compile("x").of(docs));
        assertEquals(List.of("a", "b", "C"), distinct.stream().map(v -> v.asString().getValue()).toList());
        List<BsonDocument> groups = StringOrder.under(c, () -> PipelineEvaluator.compile(List.of(
                BsonDocument.parse("{$group: {_id: '$x', n: {$sum: 1}, s: {$addToSet: '$x'}}}"))).run(docs));
        assertEquals(java.util.Map.of("a", 1, "b", 2, "C", 1), groups.stream().collect(Collectors.toMap(
                g -> g.getString("_id").getValue(), g -> g.getInt32("n").getValue())));
        BsonDocument b = groups.stream().filter(g -> g.getString("_id").getValue().equalsIgnoreCase("b")).findFirst().orElseThrow();
        assertEquals("b", b.getString("_id").getValue()); // the key as first seen
        assertEquals(new BsonArray(List.of(new BsonString("b"))), b.getArray("s")); // one of the equal strings
        List<BsonValue> byBytes = DistinctValues.compile("x").of(docs);
        assertEquals(List.of("B", "C", "a", "b"), byBytes.stream().map(v -> v.asString().getValue()).toList());
    }

    @Test
    void simpleAndInvalidDocuments() {
        assertNull(collator("{locale: 'simple'}"));
        assertNull(CollationSpec.collator(null));
        assertTrue(CollationSpec.isSimple(BsonDocument.parse("{locale: 'simple'}")));
        assertFalse(CollationSpec.isSimple(BsonDocument.parse("{locale: 'en'}")));
        for (String bad : List.of("{}", "{locale: 1}", "{locale: ''}", "{locale: 'xx_nonsense'}",
                "{locale: 'simple', strength: 2}", "{locale: 'en', strength: 0}", "{locale: 'en', strength: 6}",
                "{locale: 'en', strength: 2.5}", "{locale: 'en', strength: '2'}", "{locale: 'en', caseLevel: 1}",
                "{locale: 'en', caseFirst: 'UPPER'}", "{locale: 'en', alternate: 'ignorable'}",
                "{locale: 'en', maxVariable: 'symbol'}", "{locale: 'en', backwards: 'yes'}",
                "{locale: 'en', normalization: null}", "{locale: 'en', colour: true}")) {
            assertThrows(CollationSpec.Invalid.class, () -> collator(bad), bad);
        }
        assertThrows(CollationSpec.Invalid.class, () -> CollationSpec.collator(new BsonString("en")));
        assertThrows(NotEvaluable.class, () -> collator("{locale: 'en', version: '57.1'}"));
        assertTrue(collator("{locale: 'en', strength: 2.0}").isFrozen());
        assertTrue(collator("{locale: 'root'}").isFrozen()); // the root collation, asked for by name
    }

    private static List<String> sorted(String json, List<String> words) {
        List<BsonDocument> docs = words.stream().map(w -> new BsonDocument("w", new BsonString(w))).toList();
        return StringOrder.under(collator(json), () -> DocumentSort.compile(BsonDocument.parse("{w: 1}")).sort(docs))
                .stream().map(d -> d.getString("w").getValue()).toList();
    }

    private static boolean matches(Collator c, String filter, BsonDocument doc) {
        DocumentFilter f = DocumentFilter.compile(BsonDocument.parse(filter));
        return c == null ? f.matches(doc) : StringOrder.under(c, () -> f.matches(doc));
    }
}
