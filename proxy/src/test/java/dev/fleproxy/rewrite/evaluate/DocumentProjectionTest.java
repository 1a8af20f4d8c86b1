package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * find's projection ("Project Fields to Return from Query", "$slice (projection)", "$elemMatch
 * (projection)"), as the server's projection executor applies it. Field order matters: expected
 * documents are compared with their order (toJson).
 */
class DocumentProjectionTest {
    static String project(String projection, String doc) {
        return DocumentProjection.compile(BsonDocument.parse(projection)).apply(BsonDocument.parse(doc)).toJson();
    }

    static String json(String doc) {
        return BsonDocument.parse(doc).toJson();
    }

    @Test
    void inclusionKeepsTheNamedFieldsAndIdInTheDocumentsOrder() {
        assertEquals(json("{_id: 1, a: 1, c: 3}"), project("{c: 1, a: 1}", "{_id: 1, a: 1, b: 2, c: 3}"));
        assertEquals(json("{a: 1}"), project("{a: 1, _id: 0}", "{_id: 1, a: 1, b: 2}"));
        assertEquals(json("{_id: 1}"), project("{x: 1}", "{_id: 1, a: 1}")); // a missing field stays missing
    }

    @Test
    void inclusionAcceptsTrueAndNonZeroNumbers() {
        assertEquals(json("{_id: 1, a: 1, b: 2, c: 3}"),
                project("{a: true, b: -1, c: {$numberDecimal: '0.5'}}", "{_id: 1, a: 1, b: 2, c: 3, d: 4}"));
    }

    @Test
    void exclusionDropsTheNamedFields() {
        assertEquals(json("{_id: 1, c: 3}"), project("{a: 0, b: false}", "{_id: 1, a: 1, b: 2, c: 3}"));
        assertEquals(json("{a: 1}"), project("{_id: 0}", "{_id: 1, a: 1}"));
        assertEquals(json("{_id: 1, a: 1}"), project("{}", "{_id: 1, a: 1}"));
    }

    @Test
    void dottedInclusionThroughDocumentsAndArrays() {
        assertEquals(json("{_id: 1, a: {b: 1}}"), project("{'a.b': 1}", "{_id: 1, a: {b: 1, c: 2}}"));
        assertEquals(json("{_id: 1, a: {}}"), project("{'a.b': 1}", "{_id: 1, a: {c: 2}}")); // an empty document stays
        assertEquals(json("{_id: 1}"), project("{'a.b': 1}", "{_id: 1, a: 5}")); // a scalar is dropped
        // an array keeps each element projected; scalars in it are dropped; nested arrays are walked
        assertEquals(json("{_id: 1, a: [{b: 1}, {}, [{b: 3}]]}"),
                project("{'a.b': 1}", "{_id: 1, a: [{b: 1, c: 1}, {c: 2}, 7, [{b: 3, c: 3}, 8]]}"));
        // the subdocument keeps its own field order, not the projection's
        assertEquals(json("{_id: 1, a: {c: 2, b: 1}}"),
                project("{'a.b': 1, 'a.c': 1}", "{_id: 1, a: {c: 2, b: 1, d: 3}}"));
    }

    @Test
    void dottedExclusionThroughDocumentsAndArrays() {
        assertEquals(json("{_id: 1, a: [{c: 1}, 7, [{c: 3}]]}"),
                project("{'a.b': 0}", "{_id: 1, a: [{b: 1, c: 1}, 7, [{b: 2, c: 3}]]}"));
        assertEquals(json("{_id: 1, a: 5}"), project("{'a.b': 0}", "{_id: 1, a: 5}"));
    }

    @Test
    void sliceTakesFirstLastOrSkipLimit() {
        String doc = "{_id: 1, a: [1, 2, 3, 4, 5], b: 'x'}";
        assertEquals(json("{_id: 1, a: [1, 2], b: 'x'}"), project("{a: {$slice: 2}}", doc)); // alone: other fields stay
        assertEquals(json("{_id: 1, a: [4, 5], b: 'x'}"), project("{a: {$slice: -2}}", doc));
        assertEquals(json("{_id: 1, a: [2, 3], b: 'x'}"), project("{a: {$slice: [1, 2]}}", doc));
        assertEquals(json("{_id: 1, a: [4], b: 'x'}"), project("{a: {$slice: [-2, 1]}}", doc));
        assertEquals(json("{_id: 1, a: [1, 2, 3, 4, 5], b: 'x'}"), project("{a: {$slice: -9}}", doc));
        assertEquals(json("{_id: 1, a: [], b: 'x'}"), project("{a: {$slice: [9, 1]}}", doc));
        assertEquals(json("{_id: 1, a: 'no array', b: 'x'}"), project("{a: {$slice: 1}}",
                "{_id: 1, a: 'no array', b: 'x'}"));
    }

    @Test
    void sliceWithInclusionOrExclusion() {
        String doc = "{_id: 1, a: [1, 2, 3], b: 'x', c: 'y'}";
        assertEquals(json("{_id: 1, a: [1], b: 'x'}"), project("{a: {$slice: 1}, b: 1}", doc));
        assertEquals(json("{_id: 1, a: [3], b: 'x'}"), project("{a: {$slice: -1}, c: 0}", doc));
        // through an array of documents: each element's array is sliced
        assertEquals(json("{_id: 1, a: [{b: [1]}, 7, {b: [3]}]}"),
                project("{'a.b': {$slice: 1}}", "{_id: 1, a: [{b: [1, 2]}, 7, {b: [3, 4]}]}"));
    }

    @Test
    void elemMatchKeepsTheFirstMatchingElementAfterTheOtherFields() {
        String doc = "{_id: 1, s: [{n: 'a', x: 1}, {n: 'b', x: 2}, {n: 'c', x: 2}], z: 3}";
        // alone, $elemMatch makes an inclusion: _id and the element
        assertEquals(json("{_id: 1, s: [{n: 'b', x: 2}]}"), project("{s: {$elemMatch: {x: 2}}}", doc));
        // it comes after the included fields whatever the document's order (4.4+)
        assertEquals(json("{_id: 1, z: 3, s: [{n: 'c', x: 2}]}"), project("{s: {$elemMatch: {n: 'c'}}, z: 1}", doc));
        assertEquals(json("{_id: 1}"), project("{s: {$elemMatch: {x: 9}}}", doc)); // no match: no field
        assertEquals(json("{_id: 1, v: [5]}"), project("{v: {$elemMatch: {$gt: 4}}}", "{_id: 1, v: [1, 5, 6]}"));
    }

    @Test
    void whatCannotBeEvaluatedIsRefused() {
        for (String p : List.of("{'a.$': 1}", "{a: {$meta: 'textScore'}}", "{a: 'literal'}", "{a: null}",
                "{a: {$add: [1, 2]}}", "{a: 1, b: 0}", "{a: 0, b: 1}", "{_id: 1, a: 0}", "{a: 1, 'a.b': 1}",
                "{'a.b': 1, a: 0}", "{'a.b': {$elemMatch: {c: 1}}}", "{a: {$elemMatch: {b: 1}}, c: 0}",
                "{a: {$slice: [1, 0]}}", "{a: {$slice: 1.5}}", "{a: {$slice: 'x'}}", "{a: {$slice: [1]}}",
                "{'$a': 1}", "{'a..b': 1}", "{a: {b: 1}}")) {
            assertThrows(NotEvaluable.class, () -> DocumentProjection.compile(BsonDocument.parse(p)), p);
        }
    }
}
