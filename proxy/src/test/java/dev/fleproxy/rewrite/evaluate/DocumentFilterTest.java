package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * MongoDB's query semantics (mongod 7/8, simple collation), case by case. Each comment names the
 * rule from the server's docs ("Query an Array", "Comparison Query Operators", "Compare BSON
 * Types", "Query for Null or Missing Fields") or its matcher (matcher/path.cpp, expression_leaf.cpp).
 */
class DocumentFilterTest {
    static boolean matches(String filter, String doc) {
        return DocumentFilter.compile(BsonDocument.parse(filter)).matches(BsonDocument.parse(doc));
    }

    @Test
    void anEmptyFilterMatchesEverything() {
        assertTrue(matches("{}", "{a: 1}"));
    }

    @Test
    void implicitEqualityOnAScalar() {
        assertTrue(matches("{a: 1}", "{a: 1}"));
        assertFalse(matches("{a: 1}", "{a: 2}"));
        assertFalse(matches("{a: 1}", "{b: 1}"));
    }

    @Test
    void numbersAreEqualAcrossTypes() {
        // Compare BSON types: int32, int64, double and decimal128 compare by value
        assertTrue(matches("{a: 1}", "{a: 1.0}"));
        assertTrue(matches("{a: {$numberLong: '1'}}", "{a: {$numberDecimal: '1.00'}}"));
        assertTrue(matches("{a: {$numberDecimal: '1'}}", "{a: 1}"));
        assertFalse(matches("{a: 1}", "{a: '1'}"));
    }

    @Test
    void anArrayMatchesWhenAnElementDoesOrTheWholeArrayDoes() {
        // Query an Array: {tags: "red"} matches an array containing "red"; {tags: [..]} the exact array
        assertTrue(matches("{a: 2}", "{a: [1, 2, 3]}"));
        assertTrue(matches("{a: [1, 2]}", "{a: [1, 2]}"));
        assertFalse(matches("{a: [2, 1]}", "{a: [1, 2]}"));
        assertTrue(matches("{a: [1, 2]}", "{a: [[1, 2], 3]}"));
        assertFalse(matches("{a: 1}", "{a: [[1], 2]}")); // a nested array is one value, not walked into
    }

    @Test
    void documentEqualityIsFieldOrderSensitive() {
        // embedded documents: exact match, field order included
        assertTrue(matches("{a: {x: 1, y: 2}}", "{a: {x: 1, y: 2}}"));
        assertFalse(matches("{a: {x: 1, y: 2}}", "{a: {y: 2, x: 1}}"));
        assertTrue(matches("{a: {x: 1}}", "{a: {x: 1.0}}"));
    }

    @Test
    void nullMatchesNullAndMissing() {
        // Query for Null or Missing Fields: {item: null} matches null and missing
        assertTrue(matches("{a: null}", "{a: null}"));
        assertTrue(matches("{a: null}", "{b: 1}"));
        assertFalse(matches("{a: null}", "{a: 0}"));
        assertTrue(matches("{a: {$eq: null}}", "{}"));
        assertTrue(matches("{a: null}", "{a: [1, null]}"));
    }

    @Test
    void nullAgainstUndefinedIsRefusedSinceMongod7And8Disagree() {
        // 8.0 compatibility: "comparisons to null in equality match expressions don't match undefined"
        String[] filters = {"{a: null}", "{a: {$gte: null}}", "{a: {$in: [null]}}", "{a: {$ne: null}}"};
        for (String filter : filters) {
            assertThrows(NotEvaluable.class, () -> matches(filter, "{a: {$undefined: true}}"), filter);
        }
        assertFalse(matches("{a: 1}", "{a: {$undefined: true}}")); // no null involved: both agree
    }

    @Test
    void neNullIsItsNegation() {
        assertFalse(matches("{a: {$ne: null}}", "{}"));
        assertFalse(matches("{a: {$ne: null}}", "{a: null}"));
        assertTrue(matches("{a: {$ne: null}}", "{a: 0}"));
        assertFalse(matches("{a: {$ne: null}}", "{a: [1, null]}")); // an element equals null
    }

    @Test
    void nullThroughAnArrayOfDocumentsMatchesAnElementLackingTheField() {
        // path.cpp: each document element yields its field, missing where absent
        assertTrue(matches("{'a.b': null}", "{a: [{b: 1}, {c: 1}]}"));
        assertFalse(matches("{'a.b': null}", "{a: [{b: 1}]}"));
        // an array of scalars yields nothing on a.b, so not even null matches
        assertFalse(matches("{'a.b': null}", "{a: [1, 2]}"));
        assertTrue(matches("{'a.b': null}", "{a: 5}")); // a scalar before the end: missing
        assertTrue(matches("{'a.b': {$exists: false}}", "{a: [1, 2]}"));
    }

    @Test
    void gteAndLteNullMatchNullAndMissing() {
        // type bracketing: null compares only with null, missing and undefined
        assertTrue(matches("{a: {$gte: null}}", "{}"));
        assertTrue(matches("{a: {$lte: null}}", "{a: null}"));
        assertFalse(matches("{a: {$gt: null}}", "{a: null}"));
        assertFalse(matches("{a: {$gte: null}}", "{a: 1}"));
        assertFalse(matches("{a: {$lt: null}}", "{}"));
    }

    @Test
    void comparisonsBracketByType() {
        // a number is neither greater nor less than a string
        assertFalse(matches("{a: {$gt: 1}}", "{a: 'x'}"));
        assertFalse(matches("{a: {$lt: 'a'}}", "{a: 1}"));
        assertTrue(matches("{a: {$gt: 1}}", "{a: 1.5}"));
        assertTrue(matches("{a: {$lt: {$numberDecimal: '2.5'}}}", "{a: {$numberLong: '2'}}"));
        assertTrue(matches("{a: {$gte: 'abc'}}", "{a: 'abd'}"));
        assertFalse(matches("{a: {$gt: 5}}", "{a: {$date: '2020-01-01T00:00:00Z'}}"));
    }

    @Test
    void comparisonsOnArraysTryEachElementAndTheArray() {
        assertTrue(matches("{a: {$gt: 5}}", "{a: [1, 7]}"));
        assertFalse(matches("{a: {$gt: 5}}", "{a: [1, 2]}"));
        // conditions on an array may hold on different elements: 1 < 3 and 7 > 5
        assertTrue(matches("{a: {$gt: 5, $lt: 3}}", "{a: [1, 7]}"));
        assertTrue(matches("{a: {$gt: [1]}}", "{a: [2]}")); // the whole array against an array
    }

    @Test
    void nanEqualsNanOnlyAndIsNotOrdered() {
        assertTrue(matches("{a: NaN}", "{a: NaN}"));
        assertTrue(matches("{a: {$gte: NaN}}", "{a: NaN}"));
        assertFalse(matches("{a: {$gt: NaN}}", "{a: 1}"));
        assertFalse(matches("{a: {$lt: 1}}", "{a: NaN}"));
        assertFalse(matches("{a: {$gt: -Infinity}}", "{a: NaN}"));
    }

    @Test
    void minKeyAndMaxKeyBoundEverything() {
        assertTrue(matches("{a: {$lt: {$maxKey: 1}}}", "{a: 'x'}"));
        assertTrue(matches("{a: {$gt: {$minKey: 1}}}", "{a: null}"));
        assertTrue(matches("{a: {$lt: {$maxKey: 1}}}", "{}")); // even a missing field
        assertFalse(matches("{a: {$eq: {$maxKey: 1}}}", "{a: 1}"));
        assertTrue(matches("{a: {$maxKey: 1}}", "{a: {$maxKey: 1}}"));
    }

    @Test
    void neAndNinNegateTheWholePath() {
        // $ne: documents whose field does not equal the value, including those without it
        assertTrue(matches("{a: {$ne: 1}}", "{}"));
        assertFalse(matches("{a: {$ne: 1}}", "{a: [1, 2]}"));
        assertTrue(matches("{a: {$ne: 1}}", "{a: [2, 3]}"));
        assertFalse(matches("{a: {$nin: [1, 5]}}", "{a: [5]}"));
        assertTrue(matches("{a: {$nin: [1, 5]}}", "{}"));
    }

    @Test
    void inMatchesAnyValueAndNullMatchesMissing() {
        assertTrue(matches("{a: {$in: [1, 'x']}}", "{a: 'x'}"));
        assertTrue(matches("{a: {$in: [1, 'x']}}", "{a: [0, 1.0]}"));
        assertTrue(matches("{a: {$in: [null]}}", "{}"));
        assertFalse(matches("{a: {$in: [1]}}", "{}"));
        assertTrue(matches("{a: {$in: [[1, 2]]}}", "{a: [1, 2]}")); // the array as one value
        assertFalse(matches("{a: {$in: []}}", "{a: 1}"));
    }

    @Test
    void inWithRegularExpressions() {
        assertTrue(matches("{a: {$in: [/^ab/, 3]}}", "{a: 'abc'}"));
        assertFalse(matches("{a: {$nin: [/^ab/]}}", "{a: ['x', 'abc']}"));
    }

    @Test
    void existsIsAboutPresenceNotValue() {
        assertTrue(matches("{a: {$exists: true}}", "{a: null}"));
        assertFalse(matches("{a: {$exists: true}}", "{b: 1}"));
        assertTrue(matches("{a: {$exists: false}}", "{b: 1}"));
        assertTrue(matches("{a: {$exists: 1}}", "{a: []}"));
        assertTrue(matches("{'a.b': {$exists: true}}", "{a: [{c: 1}, {b: null}]}"));
        assertFalse(matches("{a: {$exists: 0}}", "{a: 1}"));
    }

    @Test
    void dottedPathsWalkArraysOfDocuments() {
        assertTrue(matches("{'a.b': 2}", "{a: [{b: 1}, {b: 2}]}"));
        assertTrue(matches("{'a.b.c': 3}", "{a: [{b: [{c: 3}]}]}"));
        assertTrue(matches("{'a.b': 2}", "{a: {b: [1, 2]}}"));
        // arrays nested in arrays are not walked into by a field name
        assertFalse(matches("{'a.b': 1}", "{a: [[{b: 1}]]}"));
    }

    @Test
    void numericSegmentsAreIndexesAndFieldNames() {
        // Query an Array: "a.0" is the first element; it also names a field "0" of a's documents
        assertTrue(matches("{'a.0': 5}", "{a: [5, 6]}"));
        assertFalse(matches("{'a.1': 5}", "{a: [5, 6]}"));
        assertTrue(matches("{'a.0': 7}", "{a: [{'0': 7}]}"));
        assertTrue(matches("{'a.0': 7}", "{a: {'0': 7}}"));
        assertTrue(matches("{'a.1.b': 2}", "{a: [{b: 1}, {b: 2}]}"));
        assertTrue(matches("{'a.0.1': 9}", "{a: [[8, 9]]}")); // an index enters a nested array
        assertFalse(matches("{'a.0': 1}", "{a: [[1, 2]]}")); // the element is [1, 2], compared whole
        assertFalse(matches("{'a.01': 5}", "{a: [5]}"));
    }

    @Test
    void elemMatchOnDocumentsHoldsOnOneElement() {
        // $elemMatch vs dotted conjunctions: both conditions on the same element
        String doc = "{a: [{b: 1, c: 5}, {b: 2, c: 1}]}";
        assertFalse(matches("{a: {$elemMatch: {b: 1, c: 1}}}", doc));
        assertTrue(matches("{'a.b': 1, 'a.c': 1}", doc));
        assertTrue(matches("{a: {$elemMatch: {b: 2, c: {$lt: 3}}}}", doc));
        assertFalse(matches("{a: {$elemMatch: {b: 1}}}", "{a: {b: 1}}")); // not an array
        assertTrue(matches("{a: {$elemMatch: {$or: [{b: 3}, {c: 1}]}}}", doc)); // a logical first: document form
    }

    @Test
    void elemMatchOnValuesTestsEachElement() {
        assertTrue(matches("{a: {$elemMatch: {$gte: 80, $lt: 85}}}", "{a: [82, 90]}"));
        assertFalse(matches("{a: {$elemMatch: {$gte: 80, $lt: 85}}}", "{a: [79, 90]}"));
        assertTrue(matches("{a: {$gte: 80, $lt: 85}}", "{a: [79, 90]}")); // without it: any element each
        assertTrue(matches("{a: {$elemMatch: {$not: {$gt: 5}}}}", "{a: [9, 3]}"));
        assertTrue(matches("{a: {$elemMatch: {$elemMatch: {$eq: 2}}}}", "{a: [[1, 2]]}"));
        assertTrue(matches("{'a.b': {$elemMatch: {$eq: 3}}}", "{a: [{b: [1]}, {b: [3]}]}"));
    }

    @Test
    void sizeCountsArraysOnly() {
        assertTrue(matches("{a: {$size: 2}}", "{a: [1, [2, 3]]}"));
        assertFalse(matches("{a: {$size: 1}}", "{a: 'x'}"));
        assertTrue(matches("{a: {$size: 0}}", "{a: []}"));
        assertFalse(matches("{a: {$size: 0}}", "{}"));
        assertTrue(matches("{a: {$size: 2.0}}", "{a: [1, 2]}"));
    }

    @Test
    void allNeedsEveryValue() {
        assertTrue(matches("{a: {$all: [1, 3]}}", "{a: [3, 2, 1]}"));
        assertFalse(matches("{a: {$all: [1, 4]}}", "{a: [3, 2, 1]}"));
        assertTrue(matches("{a: {$all: [1]}}", "{a: 1}"));
        assertFalse(matches("{a: {$all: []}}", "{a: [1]}"));
        assertTrue(matches("{a: {$all: [[1, 2]]}}", "{a: [[1, 2], 3]}"));
        assertTrue(matches("{a: {$all: [/^x/]}}", "{a: ['y', 'xy']}"));
    }

    @Test
    void allWithElemMatchItems() {
        String doc = "{a: [{b: 1, c: 1}, {b: 2, c: 2}]}";
        assertTrue(matches("{a: {$all: [{$elemMatch: {b: 1}}, {$elemMatch: {c: 2}}]}}", doc));
        assertFalse(matches("{a: {$all: [{$elemMatch: {b: 1, c: 2}}]}}", doc));
    }

    @Test
    void typeMatchesCodesAliasesAndNumber() {
        assertTrue(matches("{a: {$type: 'string'}}", "{a: 'x'}"));
        assertTrue(matches("{a: {$type: 2}}", "{a: 'x'}"));
        assertTrue(matches("{a: {$type: 'number'}}", "{a: {$numberDecimal: '1'}}"));
        assertFalse(matches("{a: {$type: 'int'}}", "{a: 1.0}"));
        assertTrue(matches("{a: {$type: ['bool', 'null']}}", "{a: null}"));
        assertFalse(matches("{a: {$type: 'null'}}", "{}"));
        assertTrue(matches("{a: {$type: -1}}", "{a: {$minKey: 1}}"));
    }

    @Test
    void typeOnArraysLooksAtElementsAndTheArray() {
        // $type: for an array field, any element of the type; "array" matches the array itself
        assertTrue(matches("{a: {$type: 'string'}}", "{a: [1, 'x']}"));
        assertTrue(matches("{a: {$type: 'array'}}", "{a: []}"));
        assertTrue(matches("{a: {$type: 'array'}}", "{a: [1]}"));
        assertFalse(matches("{a: {$type: 'array'}}", "{a: 1}"));
    }

    @Test
    void modTruncatesAndKeepsTheDividendsSign() {
        assertTrue(matches("{a: {$mod: [4, 0]}}", "{a: 8}"));
        assertTrue(matches("{a: {$mod: [4, 1]}}", "{a: 5.9}")); // 5.9 truncates to 5
        assertTrue(matches("{a: {$mod: [4, -1]}}", "{a: -5}")); // the remainder has the dividend's sign
        assertTrue(matches("{a: {$mod: [4.7, 1.2]}}", "{a: 9}")); // [4, 1]: the arguments truncate too
        assertFalse(matches("{a: {$mod: [4, 0]}}", "{a: 'x'}"));
        assertFalse(matches("{a: {$mod: [4, 0]}}", "{a: NaN}"));
        assertTrue(matches("{a: {$mod: [3, 1]}}", "{a: [2, 4]}"));
        assertTrue(matches("{a: {$mod: [-1, 0]}}", "{a: {$numberLong: '-9223372036854775808'}}"));
    }

    @Test
    void regexMatchesStringsAndStoredRegexes() {
        assertTrue(matches("{a: /b+c/}", "{a: 'abbc'}"));
        assertTrue(matches("{a: {$regex: 'b+c'}}", "{a: ['x', 'abc']}"));
        assertFalse(matches("{a: /b/}", "{a: 1}"));
        assertTrue(matches("{a: {$regex: 'x', $options: 'i'}}",
                "{a: {$regularExpression: {pattern: 'x', options: 'i'}}}"));
        assertFalse(matches("{a: /x/}", "{a: {$regularExpression: {pattern: 'x', options: 'i'}}}"));
        assertTrue(matches("{a: {$eq: /x/}}", "{a: /x/}")); // $eq with a regex compares regexes
        assertFalse(matches("{a: {$eq: /x/}}", "{a: 'x'}"));
    }

    @Test
    void regexOptions() {
        assertTrue(matches("{a: {$regex: '^ABC', $options: 'i'}}", "{a: 'abcd'}"));
        assertFalse(matches("{a: {$regex: '^b'}}", "{a: 'a\\nb'}"));
        assertTrue(matches("{a: {$regex: '^b', $options: 'm'}}", "{a: 'a\\nb'}"));
        assertFalse(matches("{a: {$regex: 'a.b'}}", "{a: 'a\\nb'}"));
        assertTrue(matches("{a: {$regex: 'a.b', $options: 's'}}", "{a: 'a\\nb'}"));
        assertTrue(matches("{a: {$regex: 'a b  c', $options: 'x'}}", "{a: 'abc'}"));
        assertTrue(matches("{a: /x$/}", "{a: 'x\\n'}")); // $ before a final newline
        assertFalse(matches("{a: /x$/}", "{a: 'x\\r'}")); // only LF is a newline
        assertTrue(matches("{a: /(?i)k/}", "{a: '\u212A'}")); // PCRE2's caseless k includes the Kelvin sign
        assertTrue(matches("{a: /x\\b/}", "{a: 'xé'}")); // \\b: ASCII word characters only, é is not one
    }

    @Test
    void notNegatesTheWholePredicate() {
        assertTrue(matches("{a: {$not: {$gt: 5}}}", "{a: 3}"));
        assertTrue(matches("{a: {$not: {$gt: 5}}}", "{}"));
        assertFalse(matches("{a: {$not: {$gt: 5}}}", "{a: [1, 9]}"));
        assertTrue(matches("{a: {$not: /^x/}}", "{a: 'yx'}"));
        assertFalse(matches("{a: {$not: {$regex: 'X', $options: 'i'}}}", "{a: 'x'}"));
    }

    @Test
    void logicalOperatorsNest() {
        assertTrue(matches("{$or: [{a: 1}, {b: 2}]}", "{b: 2}"));
        assertFalse(matches("{$and: [{a: 1}, {b: 2}]}", "{b: 2}"));
        assertTrue(matches("{$nor: [{a: 1}, {b: 2}]}", "{c: 1}"));
        assertTrue(matches("{$and: [{$or: [{a: 1}, {a: 2}]}, {$nor: [{b: 1}]}]}", "{a: 2, b: 3}"));
        assertTrue(matches("{a: 1, $comment: 'why'}", "{a: 1}"));
        assertFalse(matches("{$alwaysFalse: 1}", "{}"));
    }

    @Test
    void dbRefDocumentsAreValues() {
        // {$ref, $id} under a field is a DBRef to equal, not operators
        assertTrue(matches("{r: {$ref: 'c', $id: 1}}", "{r: {$ref: 'c', $id: 1}}"));
        assertTrue(matches("{'r.$id': 1}", "{r: {$ref: 'c', $id: 1}}"));
    }

    @Test
    void elemMatchReadsAnArrayElementAsADocumentOfIndexes() {
        // ElemMatchObjectMatchExpression: an element that is an array is matched as {"0": ..., "1": ...}
        assertTrue(matches("{a: {$elemMatch: {'1': 2}}}", "{a: [[1, 2]]}"));
        assertFalse(matches("{a: {$elemMatch: {'1': 2}}}", "{a: [1, 2]}")); // scalars never match
    }

    @Test
    void sizeAndTypeThroughArraysOfDocuments() {
        assertTrue(matches("{'a.b': {$size: 1}}", "{a: [{b: [1, 2]}, {b: [3]}]}"));
        assertTrue(matches("{'a.b': {$type: 'array'}}", "{a: [{b: []}]}"));
        assertTrue(matches("{a: {$type: 2.0}}", "{a: 'x'}")); // an integral double is a type code
    }

    @Test
    void allOnAScalarAndNinWithNullOnMissing() {
        assertTrue(matches("{a: {$all: ['x']}}", "{a: 'x'}"));
        assertFalse(matches("{a: {$nin: [null]}}", "{}")); // $in null matches missing, so $nin does not
        assertTrue(matches("{a: {$nin: [null]}}", "{a: 0}"));
    }

    @Test
    void stringsCompareByUtf8BytesAndNotAsNumbers() {
        assertTrue(matches("{a: {$gt: 'Z'}}", "{a: 'a'}")); // bytewise: lowercase after uppercase
        assertTrue(matches("{a: {$gt: '10'}}", "{a: '9'}")); // '9' > '1' as bytes
    }
}
