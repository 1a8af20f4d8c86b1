package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * MongoDB's sort ("cursor.sort()": comparison/sort order, "ascending/descending sort of arrays"),
 * whose keys are those of a B-tree index with the sort pattern (sort_key_generator.cpp).
 */
class DocumentSortTest {
    /** The "_id"s of docs (each {_id: n, ...}) in sort order, through comparator() and through sort(). */
    static List<Integer> order(String spec, String... docs) {
        DocumentSort sort = DocumentSort.compile(BsonDocument.parse(spec));
        List<BsonDocument> in = new ArrayList<>();
        for (String d : docs) {
            in.add(BsonDocument.parse(d));
        }
        List<BsonDocument> viaComparator = new ArrayList<>(in);
        viaComparator.sort(sort.comparator());
        List<Integer> ids = viaComparator.stream().map(d -> d.getInt32("_id").getValue()).toList();
        assertEquals(ids, sort.sort(in).stream().map(d -> d.getInt32("_id").getValue()).toList());
        return ids;
    }

    @Test
    void numbersAscendingAndDescendingWhateverTheirType() {
        assertEquals(List.of(2, 3, 1), order("{a: 1}", "{_id: 1, a: 3.5}", "{_id: 2, a: {$numberLong: '1'}}",
                "{_id: 3, a: {$numberDecimal: '2'}}"));
        assertEquals(List.of(1, 3, 2), order("{a: -1.0}", "{_id: 1, a: 3.5}", "{_id: 2, a: {$numberLong: '1'}}",
                "{_id: 3, a: {$numberDecimal: '2'}}"));
    }

    @Test
    void typesSortInBsonOrder() {
        // Comparison/Sort Order: MinKey, null, numbers, strings, objects, arrays, binData, ObjectId, bool, date
        assertEquals(List.of(6, 1, 2, 3, 4, 5), order("{a: 1}", "{_id: 1, a: null}", "{_id: 2, a: 7}",
                "{_id: 3, a: 'x'}", "{_id: 4, a: {b: 1}}", "{_id: 5, a: true}", "{_id: 6, a: {$minKey: 1}}"));
    }

    @Test
    void missingSortsAsNullAndTiesKeepTheirOrder() {
        assertEquals(List.of(1, 2, 3, 4), order("{a: 1}", "{_id: 1}", "{_id: 2, a: null}", "{_id: 3}",
                "{_id: 4, a: 0}"));
        assertEquals(List.of(4, 1, 2, 3), order("{a: -1}", "{_id: 1}", "{_id: 2, a: null}", "{_id: 3}",
                "{_id: 4, a: 0}"));
    }

    @Test
    void arraysSortByTheirLeastElementAscendingAndGreatestDescending() {
        String[] docs = {"{_id: 1, a: [1, 10]}", "{_id: 2, a: 5}", "{_id: 3, a: [3, 7]}"};
        assertEquals(List.of(1, 3, 2), order("{a: 1}", docs));
        assertEquals(List.of(1, 3, 2), order("{a: -1}", docs));
        assertEquals(List.of(2, 1), order("{a: 1}", "{_id: 1, a: [2]}", "{_id: 2, a: 1}")); // [2] sorts as 2
    }

    @Test
    void anEmptyArraySortsBeforeNull() {
        // an empty array keys as undefined, which the server orders below null
        String[] docs = {"{_id: 1, a: null}", "{_id: 2, a: []}", "{_id: 3, a: 1}", "{_id: 4}"};
        assertEquals(List.of(2, 1, 4, 3), order("{a: 1}", docs));
        assertEquals(List.of(3, 1, 4, 2), order("{a: -1}", docs));
    }

    @Test
    void dottedPathsThroughArraysCollectEveryValue() {
        String[] docs = {"{_id: 1, a: [{b: 5}, {b: 1}]}", "{_id: 2, a: {b: 3}}", "{_id: 3, a: [{b: 4}]}"};
        assertEquals(List.of(1, 2, 3), order("{'a.b': 1}", docs));
        assertEquals(List.of(1, 3, 2), order("{'a.b': -1}", docs));
        // an element without the field, or not a document, keys as null
        assertEquals(List.of(2, 1), order("{'a.b': 1}", "{_id: 1, a: [{b: 0}]}", "{_id: 2, a: [7, {b: 9}]}"));
        assertEquals(List.of(2, 1), order("{'a.b': -1}", "{_id: 1, a: [{b: 0}]}", "{_id: 2, a: [7, {b: 9}]}"));
        // an array inside an element's field is walked too
        assertEquals(List.of(2, 1), order("{'a.b': 1}", "{_id: 1, a: [{b: 2}]}", "{_id: 2, a: [{b: [9, 1]}]}"));
    }

    @Test
    void anEmptyArrayBeforeTheEndOfThePathKeysAsNull() {
        // only an empty array at the end of the path keys as undefined; a.b through [] is missing: null
        assertEquals(List.of(2, 1, 3), order("{'a.b': 1}", "{_id: 1, a: []}", "{_id: 2, a: [{b: []}]}", "{_id: 3}"));
    }

    @Test
    void anArrayInsideAnArrayIsOneValue() {
        // [[1, 2], 3] keys as [1, 2] (an array, above numbers) and 3
        assertEquals(List.of(2, 1), order("{a: 1}", "{_id: 1, a: [[1, 2], 3]}", "{_id: 2, a: 2}"));
        assertEquals(List.of(1, 2), order("{a: -1}", "{_id: 1, a: [[1, 2], 3]}", "{_id: 2, a: 2}"));
    }

    @Test
    void compoundSortsBreakTiesFieldByField() {
        assertEquals(List.of(2, 1, 3), order("{a: 1, b: -1}", "{_id: 1, a: 1, b: 1}", "{_id: 2, a: 1, b: 2}",
                "{_id: 3, a: 2, b: 9}"));
    }

    @Test
    void fieldsThroughOneArrayTakeTheSameElement() {
        // keys (x, y) per element: (1, 5) and (2, 0); the least is (1, 5), above (1, 3)
        assertEquals(List.of(2, 1), order("{'a.x': 1, 'a.y': 1}", "{_id: 1, a: [{x: 1, y: 5}, {x: 2, y: 0}]}",
                "{_id: 2, a: [{x: 1, y: 3}]}"));
    }

    @Test
    void parallelArraysAreRefusedAsTheServerFailsThem() {
        DocumentSort sort = DocumentSort.compile(BsonDocument.parse("{a: 1, b: 1}"));
        BsonDocument parallel = BsonDocument.parse("{a: [1, 2], b: [3, 4]}");
        NotEvaluable e = assertThrows(NotEvaluable.class, () -> sort.comparator().compare(parallel, parallel));
        assertTrue(e.getMessage().contains("parallel arrays"));
        assertEquals(0, sort.comparator().compare(BsonDocument.parse("{a: [1, 2], b: 3}"),
                BsonDocument.parse("{a: 1, b: 3}"))); // one array is fine
    }

    @Test
    void anEmptySpecKeepsTheInputOrder() {
        assertEquals(List.of(3, 1, 2), order("{}", "{_id: 3}", "{_id: 1}", "{_id: 2}"));
    }

    @Test
    void specsTheEvaluatorCannotReproduceAreRefused() {
        for (String spec : new String[] {"{a: {$meta: 'textScore'}}", "{a: 2}", "{a: '1'}", "{a: 0}", "{'a.0': 1}",
                "{$a: 1}", "{'a..b': 1}", "{a: true}"}) {
            assertThrows(NotEvaluable.class, () -> DocumentSort.compile(BsonDocument.parse(spec)), spec);
        }
    }

    @Test
    void stringsSortByUtf8Bytes() {
        assertEquals(List.of(2, 3, 1), order("{s: 1}", "{_id: 1, s: 'b'}", "{_id: 2, s: 'B'}", "{_id: 3, s: 'a'}"));
    }
}
