package dev.fleproxy.rewrite.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.crypto.TextTags.Kind;
import dev.fleproxy.policy.TextIndex;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * Which regexes a text index reads, and what it asks for: only what every match holds (its start,
 * its end, its literal runs); and what a string is tagged with.
 */
class TextQueryTest {
    private static final TextIndex PLAIN = new TextIndex(Kind.PREFIX, 2, 5, false, false);
    private static final TextIndex FOLDED = new TextIndex(Kind.PREFIX, 2, 5, true, true);
    private static final TextIndex SUFFIX = new TextIndex(Kind.SUFFIX, 2, 5, false, false);
    private static final TextIndex GRAMS = new TextIndex(Kind.SUBSTRING, 3, 40, true, false);

    /** {$regex: pattern, $options: options} as a driver sends it (extended JSON would read it as a regex value). */
    private static BsonDocument op(String pattern, String options) {
        BsonDocument d = new BsonDocument("$regex", new BsonString(pattern));
        return options == null ? d : d.append("$options", new BsonString(options));
    }

    private static String start(String pattern, String options) {
        RegexLiterals r = RegexLiterals.of(pattern, options);
        return r == null ? null : r.start();
    }

    private static String end(String pattern) {
        RegexLiterals r = RegexLiterals.of(pattern, "");
        return r == null ? null : r.end();
    }

    private static List<String> runs(String pattern) {
        RegexLiterals r = RegexLiterals.of(pattern, "");
        return r == null ? null : r.runs().stream().map(RegexLiterals.Run::text).toList();
    }

    private static String one(BsonDocument conjunct, TextIndex index) {
        List<String> p = TextQuery.pieces(conjunct, index);
        return p == null ? null : p.get(0);
    }

    @Test
    void theLiteralStartOfAnAnchoredRegex() {
        assertEquals("Smith", start("^Smith", ""));
        assertEquals("O.Br", start("^O\\.Br[iy]an", ""));
        assertEquals("ab", start("^abc?d", ""), "c may be absent");
        assertEquals("ab", start("^abc*", ""));
        assertEquals("ab", start("^abc{0,2}", ""));
        assertEquals("abc", start("^abc+", ""), "c at least once");
        assertEquals("ab", start("^ab\\d", ""));
        assertEquals("Müll", start("^Müll.*", "s"));
        assertNull(start("Smith", ""), "not anchored");
        assertNull(start("^Smith|^Jones", ""), "an alternation");
        assertNull(start("^abc", "m"), "^ after any newline");
        assertNull(start("^a b", "x"), "whitespace ignored");
        assertNull(start("^(?i)abc", ""));
        assertNull(start("^\\Qabc\\E", ""));
        assertNull(start("^.abc", ""), "the first atom is no literal");
    }

    @Test
    void theLiteralEndOfARegexAnchoredAtTheEnd() {
        assertEquals("son", end("son$"));
        assertEquals("son", end("^J.*son$"));
        assertEquals("n.", end("n\\.$"));
        assertEquals("b$", end("b\\$$"), "an escaped $ is a literal; the last is the anchor");
        assertEquals("\\", end("a.\\\\$"), "an escaped backslash, then the anchor");
        assertNull(end("son\\$"), "no anchor: a literal $");
        assertNull(end("sons?$"), "the last may be absent");
        assertNull(end("son+$"), "repeated: the end is n, nn …");
        assertNull(end("son.$"));
        assertNull(end("son$|x"));
        assertNull(RegexLiterals.of("son$", "m"), "$ before any newline");
    }

    @Test
    void theRunsEveryMatchHolds() {
        assertEquals(List.of("smi", "h"), runs("smi.h"));
        assertEquals(List.of("ab", "c"), runs("ab+c"), "b at least once: ab holds, then c");
        assertEquals(List.of("a", "d"), runs("a[bc]d"));
        assertEquals(List.of("x", "y"), runs("x\\dy"));
        assertEquals(List.of("a]b"), runs("a\\]b"));
        assertEquals(List.of("ab", "e"), runs("ab[]cd]e"), "a ] first is one of the class");
        assertEquals(List.of("b"), runs("a{2}b"), "a quantified a is not a run");
        assertNull(runs("a\\x41b"), "an escape with an argument: not read (it is the A of aAb)");
        assertNull(runs("a\\p{L}b"));
        assertNull(runs("a\\1"));
        assertNull(runs("a{b"), "a { that may be a literal");
        assertNull(runs("a[b"), "a class not closed");
        assertNull(runs("a[[:alpha:]]b"));
        assertNull(runs("(ab)?c"));
        assertNull(runs("a**"));
        assertNull(runs("*a"));
    }

    @Test
    void thePieceAskedForIsFoldedAndCutToTheIndexsLengths() {
        assertEquals("Smith", one(new BsonDocument("$regex", new BsonRegularExpression("^Smithson")), PLAIN));
        assertEquals("Smith", TextQuery.pieces(new BsonRegularExpression("^Smithson"), PLAIN).get(0));
        assertEquals("sm", one(op("^SM", null), FOLDED));
        assertEquals("muller".substring(0, 5), one(op("^Müller", null), FOLDED));
        assertNull(one(op("^S", null), PLAIN), "shorter than minLength");
        assertNull(one(op("^smith", "i"), PLAIN), "case-insensitive on an index that keeps case");
        assertEquals("smith", one(op("^SMITH", "i"), FOLDED));
        assertNull(one(op("^Éclair", "i"), FOLDED), "i with a start that is not ASCII");
        assertEquals("Smith", one(op("^Smith", null).append("$ne", new BsonString("Smithers")), PLAIN),
                "other operators only narrow further");
        assertNull(TextQuery.pieces(BsonDocument.parse("{$gt: 'Smith'}"), PLAIN));
        assertNull(TextQuery.pieces(BsonDocument.parse("{a: 'Smith'}").get("a"), PLAIN), "an equality: none");
        assertEquals("hnson", one(op("Johnson$", null), SUFFIX), "its last maxLength code points");
        assertNull(one(op("^Johnson", null), SUFFIX), "a suffix index reads only an end");
        assertNull(one(op("n$", null), SUFFIX), "shorter than minLength");
    }

    @Test
    void aStringIsTaggedWithItsPrefixesSuffixesOrNGrams() {
        assertEquals(List.of("Sm", "Smi", "Smit", "Smith"), List.copyOf(SearchTags.pieces(PLAIN, "Smithson")));
        assertEquals(List.of("on", "son", "nson", "hnson"), List.copyOf(SearchTags.pieces(SUFFIX, "Johnson")));
        assertEquals(List.of("n\n", "on\n", "son\n", "nson\n", "on", "son", "nson", "hnson"),
                List.copyOf(SearchTags.pieces(SUFFIX, "Johnson\n")), "$ matches before a final newline");
        assertEquals(List.of("aba", "bab"), List.copyOf(SearchTags.pieces(GRAMS, "ababa")), "distinct");
        assertTrue(SearchTags.pieces(GRAMS, "ab").isEmpty(), "shorter than n: none");
        assertNull(SearchTags.pieces(GRAMS, "x".repeat(41)), "longer than maxLength: other");
        assertTrue(SearchTags.pieces(PLAIN, "S").isEmpty());
    }

    @Test
    void aSubstringQueryAsksForTheNGramsOfItsRuns() {
        assertEquals(List.of("mit"), TextQuery.pieces(op("mit", null), GRAMS));
        List<String> grams = TextQuery.pieces(op("o.Johnson", "i"), GRAMS);
        assertEquals(Set.of("joh", "ohn", "hns", "nso", "son"), Set.copyOf(grams), "the run o is too short; folded");
        assertNull(TextQuery.pieces(op("ab.cd", null), GRAMS), "no run of 3");
        assertNull(TextQuery.pieces(op("Müller", "i"), GRAMS), "i with a run that is not ASCII");
        assertEquals(List.of("ler"), TextQuery.pieces(op("Mü.ler", "i"), GRAMS), "the ASCII runs still narrow");
        assertEquals(TextQuery.MAX_GRAMS, TextQuery.pieces(op("abcdefghijklmnopqrstuvwxyz", null), GRAMS).size());
        assertTrue(TextQuery.pieces(op("xyz.abcdefghijklmnopqrstuvwxyz", null), GRAMS).contains("abc"),
                "the longest run's n-grams first");
    }
}
