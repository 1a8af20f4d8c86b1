package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** What the evaluator refuses when compiling: it never guesses at semantics it cannot reproduce. */
class DocumentFilterRefusalTest {
    static String refusal(String filter) {
        return assertThrows(NotEvaluable.class, () -> DocumentFilter.compile(BsonDocument.parse(filter)))
                .getMessage();
    }

    @Test
    void javascriptAndExpressionsAreRefused() {
        assertTrue(refusal("{$where: 'this.a == 1'}").contains("$where cannot be evaluated by the proxy"));
        assertTrue(refusal("{$expr: {$function: {}}}").contains("$function"));
        assertTrue(refusal("{$text: {$search: 'x'}}").contains("$text"));
        assertTrue(refusal("{$jsonSchema: {}}").contains("$jsonSchema"));
        assertTrue(refusal("{$or: [{a: 1}, {$where: 'x'}]}").contains("$where"));
    }

    @Test
    void geospatialAndBitOperatorsAreRefused() {
        assertTrue(refusal("{a: {$geoWithin: {$center: [[0, 0], 1]}}}").contains("$geoWithin"));
        assertTrue(refusal("{a: {$geoIntersects: {$geometry: {type: 'Point', coordinates: [0, 0]}}}}")
                .contains("$geoIntersects"));
        assertTrue(refusal("{a: {$near: [0, 0]}}").contains("$near"));
        assertTrue(refusal("{a: {$nearSphere: [0, 0]}}").contains("$nearSphere"));
        assertTrue(refusal("{a: {$bitsAllSet: 1}}").contains("$bitsAllSet"));
        assertTrue(refusal("{a: {$bitsAnyClear: [0]}}").contains("$bitsAnyClear"));
    }

    @Test
    void unknownOperatorsAreRefused() {
        assertTrue(refusal("{a: {$foo: 1}}").contains("$foo"));
        assertTrue(refusal("{$foo: 1}").contains("$foo"));
        assertTrue(refusal("{a: {$gt: 1, b: 2}}").contains("b")); // a field among operators
        assertTrue(refusal("{a: {$elemMatch: {$foo: 1}}}").contains("$foo"));
    }

    @Test
    void shapesTheServerRejectsAreRefused() {
        refusal("{$and: []}");
        refusal("{$or: [1]}");
        refusal("{a: {$in: 1}}");
        refusal("{a: {$in: [{$gt: 1}]}}");
        refusal("{a: {$size: -1}}");
        refusal("{a: {$size: 1.5}}");
        refusal("{a: {$mod: [0, 1]}}");
        refusal("{a: {$mod: [1]}}");
        refusal("{a: {$mod: [NaN, 1]}}");
        refusal("{a: {$type: 'missing'}}");
        refusal("{a: {$type: 0}}");
        refusal("{a: {$type: []}}");
        refusal("{a: {$gt: /x/}}");
        refusal("{a: {$ne: /x/}}");
        refusal("{a: {$not: {}}}");
        refusal("{a: {$not: 5}}");
        refusal("{a: {$options: 'i'}}");
        refusal("{a: {$regex: /x/i, $options: 'm'}}");
        refusal("{a: {$regex: 'x', $options: 'g'}}");
        refusal("{a: {$all: [{$elemMatch: {b: 1}}, 2]}}");
        refusal("{a: {$all: [{$gt: 1}]}}");
        refusal("{a: {$undefined: true}}");
        refusal("{'a..b': 1}");
        refusal("{$alwaysTrue: true}");
        refusal("{a: {$id: 1}}"); // an incomplete DBRef is an unknown operator
    }

    @Test
    void regexConstructsWhosePcreAndJavaMeaningsMayDifferAreRefused() {
        for (String pattern : new String[] {"a++", "(?>a)", "(?<=a)b", "(?<n>a)", "(?P<n>a)", "(a)\\\\1",
                "\\\\h", "\\\\R", "\\\\X", "\\\\K", "(?(1)a)", "(?R)", "\\\\p{L}", "[[:alpha:]]", "(?x)a",
                "(?#c)", "(*UTF)", "\\\\cA", "\\\\0", "a{,3}", "{", "[]a]", "[a&&b]", "\\\\Ex", "(?U)a",
                "*a", "a**", "(a", "a)", "[a", "\\\\x4", "\\\\x{D800}", "\\\\G", "\\\\N", "[\\\\b]"}) {
            String message = refusal("{a: {$regex: '" + pattern + "'}}");
            assertTrue(message.startsWith("$regex /"), pattern + ": " + message);
        }
    }

    @Test
    void caselessNonAsciiLettersAreRefused() {
        // PCRE2's Unicode case sets and Java's case mappings disagree (İ, ı, and the like)
        refusal("{a: {$regex: 'é', $options: 'i'}}");
        refusal("{a: {$regex: '[à-ÿ]', $options: 'i'}}");
        refusal("{a: {$regex: '(?i)é'}}");
    }

    @Test
    void extendedModeAmbiguitiesAreRefused() {
        refusal("{a: {$regex: 'a # comment', $options: 'x'}}");
        refusal("{a: {$regex: 'a +', $options: 'x'}}");
    }
}
