package dev.fleproxy.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bson.BsonBinaryWriter;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;

/**
 * A name given twice is found whether the document is small enough for names to be compared pair
 * by pair (up to 32) or large enough for a set, at the top and deep down.
 */
class BsonCursorNamesTest {

    /** A document of the given names in order (repeats kept: the writer does not check them), each an int. */
    private static byte[] document(String... names) {
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter w = new BsonBinaryWriter(out)) {
            w.writeStartDocument();
            for (String n : names) {
                w.writeInt32(n, 1);
            }
            w.writeEndDocument();
        }
        return out.toByteArray();
    }

    private static String[] names(int n, String repeated) {
        String[] names = new String[n + (repeated == null ? 0 : 1)];
        for (int i = 0; i < n; i++) {
            names[i] = "field" + i;
        }
        if (repeated != null) {
            names[n] = repeated;
        }
        return names;
    }

    private static BsonCursor.NameProblem problem(byte[] doc) {
        return BsonCursor.nameProblem(doc, 0, doc.length, true);
    }

    @Test
    void aRepeatedNameIsFoundAtEverySize() {
        for (int n : new int[] {1, 5, 11, 31, 32, 33, 40, 100}) {
            assertNull(problem(document(names(n, null))), n + " distinct names");
            BsonCursor.NameProblem p = problem(document(names(n, "field0")));
            assertTrue(p != null && p.duplicate(), n + " names and field0 again");
            assertEquals("field0", p.path());
            BsonCursor.NameProblem last = problem(document(names(n, "field" + (n - 1))));
            assertEquals("field" + (n - 1), last.path(), n + " names and the last again");
        }
    }

    @Test
    void namesAlikeButForOneByteAreDistinctAndEmptyNamesRepeatToo() {
        assertNull(problem(document("fieldA", "fielda", "gieldA", "fieldAA")));
        assertNull(problem(document("ab", "ba")));
        BsonCursor.NameProblem p = problem(document("", "a", ""));
        assertTrue(p != null && p.duplicate() && p.path().isEmpty());
    }

    @Test
    void aRepeatedNameInsideASubDocumentNamesItsPath() {
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter w = new BsonBinaryWriter(out)) {
            w.writeStartDocument();
            w.writeInt32("a", 1);
            w.writeStartDocument("inner");
            for (String n : names(40, "field7")) {
                w.writeInt32(n, 1);
            }
            w.writeEndDocument();
            w.writeEndDocument();
        }
        byte[] doc = out.toByteArray();
        BsonCursor.NameProblem p = problem(doc);
        assertTrue(p.duplicate());
        assertEquals("inner.field7", p.path());
        assertNull(BsonCursor.nameProblem(doc, 0, doc.length, false), "not looked for below the top unless asked");
    }
}
