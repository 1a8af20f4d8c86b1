package dev.fleproxy.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The embedded backend's indexes as the planner uses them: which queries each can answer (a
 * condition it handles among those the query ANDs), and the candidates it finds for them, always
 * holding every match.
 */
class BackendIndexesTest {
    /** JSON as mongo-java-server's own documents hold it (the driver's parser, converted). */
    private static Document doc(String json) {
        return (Document) converted(org.bson.Document.parse(json));
    }

    private static Object converted(Object v) {
        if (v instanceof java.util.Map<?, ?> m) {
            Document d = new Document();
            m.forEach((k, x) -> d.put((String) k, converted(x)));
            return d;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(x -> out.add(converted(x)));
            return out;
        }
        return v;
    }

    private static List<Integer> list(Iterable<Integer> positions) {
        List<Integer> out = new ArrayList<>();
        positions.forEach(out::add);
        return out;
    }

    @Test
    void theIdIndexAnswersAQueryThatNamesMoreThanItsKey() {
        ConjunctUniqueIndex id = new ConjunctUniqueIndex("_id_", List.of(new IndexKey("_id", true)), false);
        for (int i = 0; i < 5; i++) {
            id.add(doc("{_id: " + i + ", x: " + (i * 10) + "}"), i, null);
        }
        assertTrue(id.canHandle(doc("{_id: 3}")));
        assertTrue(id.canHandle(doc("{_id: 3, x: 30}")));
        assertTrue(id.canHandle(doc("{$and: [{_id: 3}, {x: {$eq: 30}}, {$and: [{y: {$exists: false}}]}]}")),
                "the proxy's compare-and-swap filter");
        assertTrue(id.canHandle(doc("{_id: {$in: [1, 4]}, x: {$gt: 5}}")));
        assertEquals(List.of(3), list(id.getPositions(doc("{$and: [{_id: 3}, {x: 99}]}"))), "candidates; the collection filters");
        assertEquals(List.of(1, 4), list(id.getPositions(doc("{_id: {$in: [4, 1]}, x: 1}"))));
        assertFalse(id.canHandle(doc("{_id: {$gt: 1}, x: 1}")), "a range: the collection is read");
        assertFalse(id.canHandle(doc("{$or: [{_id: 1}, {x: 1}]}")), "not a condition every match meets");
        assertFalse(id.canHandle(doc("{x: 1}")));
    }

    @Test
    void aSecondaryIndexFindsEveryDocumentHoldingAValueArraysIncluded() {
        MemorySecondaryIndex tags = new MemorySecondaryIndex("tags_1", List.of(new IndexKey("tags", true)), false);
        tags.add(doc("{_id: 0, tags: ['a', 'b']}"), 0, null);
        tags.add(doc("{_id: 1, tags: 'a'}"), 1, null);
        tags.add(doc("{_id: 2, tags: [1, 2]}"), 2, null);
        tags.add(doc("{_id: 3}"), 3, null);
        tags.add(doc("{_id: 4, tags: [[1]]}"), 4, null);
        assertTrue(tags.canHandle(doc("{tags: 'a'}")));
        assertEquals(List.of(0, 1), list(tags.getPositions(doc("{tags: 'a'}"))));
        assertEquals(List.of(2), list(tags.getPositions(doc("{tags: {$in: [1.0, 'zz']}}"))), "numbers by value");
        assertEquals(List.of(0, 2), list(tags.getPositions(doc("{$and: [{tags: {$in: ['b', 2]}}, {other: 1}]}"))));
        for (String q : List.of("{tags: null}", "{tags: {$gt: 1}}", "{tags: [1, 2]}", "{tags: {a: 1}}",
                "{tags: {$eq: 'a', $ne: 'b'}}", "{other: 1}", "{tags: {$regex: 'a'}}")) {
            assertFalse(tags.canHandle(doc(q)), q + ": the collection is read");
        }
        // null among an $in's values: the documents without the key too (and an array of arrays, which may hold null)
        assertEquals(List.of(0, 1, 3, 4), list(tags.getPositions(doc("{tags: {$in: ['a', null]}}"))));
        tags.updateInPlace(doc("{_id: 1, tags: 'a'}"), doc("{_id: 1, tags: ['c']}"), 1, null);
        assertEquals(List.of(0), list(tags.getPositions(doc("{tags: 'a'}"))));
        assertEquals(Integer.valueOf(0), tags.remove(doc("{_id: 0, tags: ['a', 'b']}")));
        assertEquals(List.of(), list(tags.getPositions(doc("{tags: {$in: ['a', 'b']}}"))));
        assertEquals(List.of(1), list(tags.getPositions(doc("{tags: 'c'}"))));
    }

    @Test
    void aCompoundIndexLooksUpEachCombinationAndASparseOneSkipsDocumentsWithoutItsKeys() {
        MemorySecondaryIndex ab = new MemorySecondaryIndex("a_1_b.c_1",
                List.of(new IndexKey("a", true), new IndexKey("b.c", true)), false);
        ab.add(doc("{_id: 0, a: 1, b: {c: 'x'}}"), 0, null);
        ab.add(doc("{_id: 1, a: 2, b: [{c: 'x'}, {c: 'y'}]}"), 1, null);
        ab.add(doc("{_id: 2, a: 1, b: {c: 'z'}}"), 2, null);
        assertEquals(List.of(0, 1), list(ab.getPositions(doc("{a: {$in: [1, 2]}, 'b.c': 'x'}"))));
        assertFalse(ab.canHandle(doc("{a: 1}")), "every key needs a condition");

        MemorySecondaryIndex sparse = new MemorySecondaryIndex("s_1", List.of(new IndexKey("s", true)), true);
        sparse.add(doc("{_id: 0}"), 0, null);
        sparse.add(doc("{_id: 1, s: 5}"), 1, null);
        assertEquals(1, sparse.getCount());
        assertEquals(Integer.valueOf(0), sparse.remove(doc("{_id: 0}")), "its position is known all the same");
    }

    @Test
    void aNullLookupOnOneKeyFindsEveryDocumentThatMightHoldNullThere() {
        MemorySecondaryIndex t = new MemorySecondaryIndex("t_1", List.of(new IndexKey("t.p", true)), false);
        String[] docs = {"{_id: 0, t: {p: [1, 2]}}", "{_id: 1}", "{_id: 2, t: {}}", "{_id: 3, t: {p: null}}",
            "{_id: 4, t: {p: []}}", "{_id: 5, t: {p: [3, null]}}", "{_id: 6, t: [{p: 1}, {q: 2}]}",
            "{_id: 7, t: {p: [{a: 1}]}}", "{_id: 8, t: {p: 2}}"};
        for (int i = 0; i < docs.length; i++) {
            t.add(doc(docs[i]), i, null);
        }
        assertTrue(t.canHandle(doc("{'t.p': {$in: [2, null]}}")));
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8), list(t.getPositions(doc("{'t.p': {$in: [2, null]}}"))));
        assertEquals(List.of(1, 2, 3, 4, 5, 6, 7), list(t.getPositions(doc("{'t.p': {$in: [null]}}"))));
        t.updateInPlace(doc(docs[1]), doc("{_id: 1, t: {p: [9]}}"), 1, null);
        t.updateInPlace(doc(docs[8]), doc("{_id: 8}"), 8, null);
        assertEquals(List.of(2, 3, 4, 5, 6, 7, 8), list(t.getPositions(doc("{'t.p': {$in: [null]}}"))));
        t.remove(doc("{_id: 3, t: {p: null}}"));
        assertEquals(List.of(2, 4, 5, 6, 7, 8), list(t.getPositions(doc("{'t.p': {$in: [null]}}"))));
        MemorySecondaryIndex sparse = new MemorySecondaryIndex("s_1", List.of(new IndexKey("t.p", true)), true);
        assertFalse(sparse.canHandle(doc("{'t.p': {$in: [2, null]}}")), "a sparse index holds no missing key");
        MemorySecondaryIndex two = new MemorySecondaryIndex("tw", List.of(new IndexKey("a", true), new IndexKey("b", true)), false);
        assertFalse(two.canHandle(doc("{a: {$in: [1, null]}, b: 1}")), "null on one key of several: a scan");
    }
}
