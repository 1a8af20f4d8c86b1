package dev.fleproxy.rewrite.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.fleproxy.policy.PrefixIndex;
import org.bson.BsonDocument;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** Which regexes a prefix index reads, and the start it asks for: only what every match starts with. */
class PrefixQueryTest {
    private static final PrefixIndex PLAIN = new PrefixIndex(2, 5, false, false);
    private static final PrefixIndex FOLDED = new PrefixIndex(2, 5, true, true);

    /** {$regex: pattern, $options: options} as a driver sends it (extended JSON would read it as a regex value). */
    private static BsonDocument op(String pattern, String options) {
        BsonDocument d = new BsonDocument("$regex", new BsonString(pattern));
        return options == null ? d : d.append("$options", new BsonString(options));
    }

    @Test
    void theLiteralStartOfAnAnchoredRegex() {
        assertEquals("Smith", PrefixQuery.literal("^Smith", ""));
        assertEquals("O.Br", PrefixQuery.literal("^O\\.Br[iy]an", ""));
        assertEquals("ab", PrefixQuery.literal("^abc?d", ""), "c may be absent");
        assertEquals("ab", PrefixQuery.literal("^abc*", ""));
        assertEquals("ab", PrefixQuery.literal("^abc{0,2}", ""));
        assertEquals("abc", PrefixQuery.literal("^abc+", ""), "c at least once");
        assertEquals("ab", PrefixQuery.literal("^ab\\d", ""));
        assertEquals("Müll", PrefixQuery.literal("^Müll.*", "s"));
        assertNull(PrefixQuery.literal("Smith", ""), "not anchored");
        assertNull(PrefixQuery.literal("^Smith|^Jones", ""), "an alternation");
        assertNull(PrefixQuery.literal("^abc", "m"), "^ after any newline");
        assertNull(PrefixQuery.literal("^a b", "x"), "whitespace ignored");
        assertNull(PrefixQuery.literal("^(?i)abc", ""));
        assertNull(PrefixQuery.literal("^\\Qabc\\E", ""));
    }

    @Test
    void theStartAskedForIsFoldedAndCutToTheIndexsLengths() {
        assertEquals("Smith", PrefixQuery.start(new BsonRegularExpression("^Smithson"), PLAIN));
        assertEquals("sm", PrefixQuery.start(op("^SM", null), FOLDED));
        assertEquals("muller".substring(0, 5), PrefixQuery.start(op("^Müller", null), FOLDED));
        assertNull(PrefixQuery.start(op("^S", null), PLAIN), "shorter than minLength");
        assertNull(PrefixQuery.start(op("^smith", "i"), PLAIN),
                "case-insensitive on an index that keeps case");
        assertEquals("smith", PrefixQuery.start(op("^SMITH", "i"), FOLDED));
        assertNull(PrefixQuery.start(op("^Éclair", "i"), FOLDED),
                "i with a start that is not ASCII");
        assertEquals("Smith", PrefixQuery.start(op("^Smith", null).append("$ne", new BsonString("Smithers")), PLAIN),
                "other operators only narrow further");
        assertNull(PrefixQuery.start(BsonDocument.parse("{$gt: 'Smith'}"), PLAIN));
        assertNull(PrefixQuery.start(BsonDocument.parse("{a: 'Smith'}").get("a"), PLAIN), "an equality: none");
    }

    @Test
    void foldingWorksCodePointByCodePoint() {
        assertEquals("kkk", FOLDED.fold("Kk\u212A"), "K, k and the Kelvin sign");
        assertEquals("eclair", FOLDED.fold("Éclair"));
        assertEquals("eclair", FOLDED.fold("E\u0301clair"), "decomposed or not");
        assertEquals("Éclair", PLAIN.fold("Éclair"));
        String s = "İstanbul";
        assertEquals(FOLDED.fold(s.substring(0, 3)), FOLDED.fold(s).substring(0, FOLDED.fold(s.substring(0, 3)).length()),
                "a folded start is the start of the folded whole");
    }
}
