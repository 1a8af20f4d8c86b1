package dev.fleproxy.rewrite.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.fleproxy.rewrite.bson.TopLevelFields;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * The top-level fields a filter or a sort reads: a candidate decoded only that far (TopLevelFields)
 * matches and sorts as the whole document does; a filter that may read anything ($expr) says so.
 */
class FieldsReadTest {
    private static final List<String> DOCUMENTS = List.of(
            "{_id: 1, a: 1, b: [{c: 1}, {c: 2}], d: 'x', pad: 'ppp'}",
            "{_id: 2, a: [1, 5], b: {c: 3}, pad: {a: 1}}",
            "{_id: 3, b: [], d: null, e: {a: 1}}",
            "{_id: 4, a: {b: 2}, d: 'y', z: [1, 2, 3]}",
            "{_id: 5}");

    @Test
    void aCandidateDecodedAsFarAsTheFilterReadsMatchesAsTheWholeOne() {
        for (String f : List.of("{a: 1}", "{'a.b': {$gt: 1}}", "{$or: [{a: 1}, {b: {$elemMatch: {c: 1}}}]}",
                "{$nor: [{a: {$exists: false}}]}", "{a: {$not: {$gt: 2}}}", "{d: {$in: [null, 'y']}}",
                "{$and: [{b: {$size: 0}}, {e: {$exists: true}}]}", "{$alwaysTrue: 1}", "{z: {$all: [1, 3]}}",
                "{'b.c': {$ne: 2}}", "{pad: {$type: 'object'}}")) {
            DocumentFilter filter = DocumentFilter.compile(BsonDocument.parse(f));
            Set<String> fields = filter.fieldsRead();
            assertNotNull(fields, f);
            for (String d : DOCUMENTS) {
                RawBsonDocument raw = new RawBsonDocument(BsonDocument.parse(d), new BsonDocumentCodec());
                assertEquals(filter.matches(raw.decode(new BsonDocumentCodec())),
                        filter.matches(decode(raw, fields)), f + " on " + d);
            }
        }
    }

    @Test
    void anExpressionMayReadAnyField() {
        assertNull(DocumentFilter.compile(BsonDocument.parse("{$expr: {$gt: ['$a', 1]}}")).fieldsRead());
        assertNull(DocumentFilter.compile(BsonDocument.parse("{$or: [{a: 1}, {$expr: '$$ROOT'}]}")).fieldsRead());
    }

    @Test
    void aSortReadsTheFirstSegmentOfEachKey() {
        assertEquals(Set.of("a", "b"), DocumentSort.compile(BsonDocument.parse("{'a.x': 1, b: -1, 'a.y': 1}")).fieldsRead());
    }

    @Test
    void fieldsAreDecodedInTheirOrderAndTheOthersSkipped() {
        RawBsonDocument raw = new RawBsonDocument(BsonDocument.parse("{a: 1, b: {c: [1, {d: 2}]}, e: 'x', f: 2.5}"),
                new BsonDocumentCodec());
        assertEquals(BsonDocument.parse("{b: {c: [1, {d: 2}]}, f: 2.5}"), decode(raw, Set.of("f", "b", "q")));
        RawBsonDocument scalars = new RawBsonDocument(BsonDocument.parse(
                "{i: 1, l: {$numberLong: '2'}, d: 1.5, t: true, n: null, s: 'x', m: {$date: 0}, k: {$numberDecimal: '1.0'}, i: 7}"),
                new BsonDocumentCodec());
        assertEquals(scalars.decode(new BsonDocumentCodec()),
                decode(scalars, Set.of("i", "l", "d", "t", "n", "s", "m", "k")), "each type as the driver decodes it; the last i");
    }

    /** The document's bytes at an offset in a larger buffer, as a batch holds them. */
    private static BsonDocument decode(RawBsonDocument raw, Set<String> fields) {
        java.nio.ByteBuffer b = raw.getByteBuffer().asNIO();
        byte[] buf = new byte[b.remaining() + 7];
        b.get(buf, 7, buf.length - 7);
        return new TopLevelFields(fields).decode(buf, 7, buf.length - 7);
    }
}
