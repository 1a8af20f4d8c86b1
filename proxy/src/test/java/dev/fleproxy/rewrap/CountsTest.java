package dev.fleproxy.rewrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * The documents a run leaves or adopts are listed by _id, once per category, bounded (the first
 * {@link Listed#MAX_IDS}, and at most {@link Listed#MAX_BYTES} of _ids) with a whole count, and
 * survive the checkpoint.
 */
class CountsTest {

    @Test
    void leftAndAdoptedDocumentsAreListedOncePerCategory() {
        Counts c = new Counts();
        c.document(new BsonInt32(1), List.of(Category.UNREADABLE, Category.UNREADABLE, Category.CURRENT));
        c.document(new BsonString("two"), List.of(Category.PLAINTEXT, Category.NOT_ADOPTABLE));
        c.document(new BsonInt32(3), List.of(Category.PREVIOUS_KEY, Category.CURRENT));
        assertEquals(2, c.of(Category.UNREADABLE));
        assertEquals(3, c.skipped());
        assertEquals(2, c.leftDocuments);
        assertEquals(List.of("adopted (plaintext): 1 document: \"two\"",
                "left (not_adoptable): 1 document: \"two\"",
                "left (unreadable): 1 document: 1"), c.listing());
    }

    @Test
    void theListIsBoundedAndTheCountWhole() {
        Counts c = new Counts();
        for (int i = 0; i < 250; i++) {
            c.document(new BsonInt32(i), List.of(Category.PLAINTEXT_DENIED));
        }
        Listed l = c.listed.get(Category.PLAINTEXT_DENIED);
        assertEquals(250, l.documents);
        assertEquals(Listed.MAX_IDS, l.ids.size());
        assertEquals(new BsonInt32(99), l.ids.get(99));
        assertTrue(l.describe().endsWith(", 99, … and 150 more (only the first 100 are kept)"), l.describe());

        Listed big = new Listed();
        String large = "x".repeat(Listed.MAX_BYTES / 3);
        for (int i = 0; i < 5; i++) {
            big.add(new BsonString(large + i));
        }
        big.add(new BsonInt32(1)); // small, but after one that did not fit: the list stays the first ones
        assertEquals(2, big.ids.size());
        assertEquals(6, big.documents);
    }

    @Test
    void theListingSurvivesTheCheckpoint() {
        Counts c = new Counts();
        for (int i = 0; i < 120; i++) {
            c.document(new BsonInt32(i), List.of(Category.UNKNOWN_KEY));
        }
        c.document(new BsonInt32(500), List.of(Category.PLAINTEXT));
        Counts back = Counts.fromBson(c.toBson());
        assertEquals(c.listing(), back.listing());
        assertEquals(121, back.leftDocuments + back.listed.get(Category.PLAINTEXT).documents);
        back.document(new BsonInt32(1000), List.of(Category.UNKNOWN_KEY));
        assertEquals(121, back.listed.get(Category.UNKNOWN_KEY).documents);
        assertEquals(Listed.MAX_IDS, back.listed.get(Category.UNKNOWN_KEY).ids.size());
        // a checkpoint written before the listing existed still reads
        assertEquals(List.of(), Counts.fromBson(new org.bson.BsonDocument()).listing());
    }

    @Test
    void batchesAddedInOrderKeepTheFirstIdsAndTheWholeCount() {
        Counts whole = new Counts();
        for (int b = 0; b < 3; b++) {
            Counts batch = new Counts();
            batch.examined = 60;
            for (int i = 0; i < 60; i++) {
                batch.document(new BsonInt32(b * 60 + i), List.of(Category.PLAINTEXT, Category.UNREADABLE));
            }
            batch.rewritten = 60;
            whole.add(batch);
        }
        assertEquals(180, whole.examined);
        assertEquals(180, whole.rewritten);
        assertEquals(180, whole.leftDocuments);
        assertEquals(180, whole.of(Category.UNREADABLE));
        Listed l = whole.listed.get(Category.PLAINTEXT);
        assertEquals(180, l.documents);
        assertEquals(Listed.MAX_IDS, l.ids.size());
        assertEquals(new BsonInt32(99), l.ids.get(99));
    }
}
