package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** $regex as PCRE2 reads it under MongoDB (UTF, no UCP, LF newlines), through the Java translation. */
class DocumentFilterRegexTest {
    static boolean finds(String pattern, String options, String text) {
        BsonDocument filter = new BsonDocument("a", new BsonDocument("$regex", new BsonString(pattern))
                .append("$options", new BsonString(options)));
        return DocumentFilter.compile(filter).matches(new BsonDocument("a", new BsonString(text)));
    }

    @Test
    void literalsClassesAndQuantifiers() {
        assertTrue(finds("^a[b-d]{2,3}e?$", "", "abce"));
        assertFalse(finds("^a[b-d]{2,3}e?$", "", "abe"));
        assertTrue(finds("colou?r", "", "my color"));
        assertTrue(finds("a.*?c", "", "abbbc"));
        assertTrue(finds("[^0-9]+", "", "12x3"));
        assertTrue(finds("1\\.5", "", "1.5"));
        assertFalse(finds("1\\.5", "", "105"));
        assertTrue(finds("[-a]", "", "-"));
        assertTrue(finds("[a-]", "", "-"));
        assertTrue(finds("a]b}", "", "a]b}")); // ']' and '}' alone are literals in both engines
    }

    @Test
    void shorthandClassesAreAscii() {
        // without UCP, \d \w \s know ASCII only
        assertFalse(finds("\\d", "", "\u0663")); // ARABIC-INDIC DIGIT THREE
        assertFalse(finds("\\w", "", "é"));
        assertTrue(finds("\\s", "", "\u000B")); // PCRE2's \s includes VT, as Java's does
        assertFalse(finds("\\s", "", "\u00A0"));
        assertTrue(finds("[\\w-]+@", "", "a-b@"));
    }

    @Test
    void caselessMatchingFollowsPcreCaseSets() {
        assertTrue(finds("STRASSE", "i", "strasse"));
        assertTrue(finds("[a-z]+", "i", "ABC"));
        assertTrue(finds("s", "i", "\u017F")); // long s is in s's case set
        assertFalse(finds("i", "i", "\u0130")); // but İ is not in i's
        assertFalse(finds("[^k]", "i", "\u212A")); // a negated class excludes the whole set
        assertTrue(finds("(?i:a)b", "", "Ab"));
        assertFalse(finds("(?i:a)b", "", "AB"));
        assertTrue(finds("a(?i)b|c", "", "C")); // an inline option carries into later branches
        assertTrue(finds("€", "i", "€")); // a character without case is fine under i
    }

    @Test
    void anchorsAndNewlines() {
        assertTrue(finds("^b$", "m", "a\nb\nc"));
        assertFalse(finds("^$", "m", "a\n")); // multiline ^ does not match after a final newline
        assertTrue(finds("a\\Z", "", "a\n"));
        assertFalse(finds("a\\z", "", "a\n"));
        assertTrue(finds("\\Aa", "m", "a"));
        assertFalse(finds("\\Ab", "m", "a\nb"));
        assertTrue(finds("a.c", "", "a\rc")); // '.' excludes only LF
    }

    @Test
    void extendedModeDropsWhiteSpaceOutsideClasses() {
        assertTrue(finds("a b [ ]", "x", "ab "));
        assertTrue(finds("a\\ b", "x", "a b"));
        assertTrue(finds("\\Qa.b\\E+", "", "a.bb"));
        assertFalse(finds("\\Qa.b\\E", "", "axb"));
    }

    @Test
    void wordBoundariesUseAsciiWordCharacters() {
        assertTrue(finds("\\bcat\\b", "", "a cat."));
        assertFalse(finds("\\bcat\\b", "", "concat"));
        assertTrue(finds("é\\B", "", "éé")); // two non-word characters: no boundary between them
    }

    @Test
    void hexEscapesAndLookahead() {
        assertTrue(finds("\\x41\\x{1F600}", "", "A\uD83D\uDE00"));
        assertTrue(finds("a(?=b)", "", "ab"));
        assertFalse(finds("a(?!b)", "", "ab"));
        assertTrue(finds("(ab|cd)+$", "", "xabcd"));
    }
}
