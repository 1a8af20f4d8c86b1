package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.rewrite.evaluate.CandidateWindow;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.evaluate.DocumentSort;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * Candidates examined as they come and kept only as the answer needs: the same answer as sorting
 * and windowing every match, with equal sort keys in the order read, while holding at most about
 * twice skip + limit.
 */
class MatchedCandidatesTest {
    private static final DocumentFilter EVEN = DocumentFilter.compile(BsonDocument.parse("{even: true}"));
    private static final DocumentSort BY_X = DocumentSort.compile(BsonDocument.parse("{x: 1, y: -1}"));

    private static List<BsonDocument> candidates(long seed, int n) {
        Random r = new Random(seed);
        List<BsonDocument> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // few distinct keys, so that ties are everywhere and their order is what is tested
            out.add(new BsonDocument("_id", new BsonInt32(i)).append("x", new BsonInt32(r.nextInt(7)))
                    .append("y", new BsonInt32(r.nextInt(3))).append("even", org.bson.BsonBoolean.valueOf(r.nextBoolean())));
        }
        return out;
    }

    /** What the answer was before candidates were matched as they came: every match, sorted, then the window. */
    private static List<BsonDocument> everyMatch(List<BsonDocument> docs, DocumentSort sort, long skip, long limit) {
        List<BsonDocument> matched = new ArrayList<>();
        for (BsonDocument d : docs) {
            if (EVEN.matches(d)) {
                matched.add(d);
            }
        }
        return CandidateWindow.apply(sort == null ? matched : sort.sort(matched), skip, limit);
    }

    private static MatchedCandidates examined(List<BsonDocument> docs, DocumentSort sort, boolean count,
                                              long skip, long limit) {
        MatchedCandidates m = new MatchedCandidates(EVEN, sort, count, new EvaluatedQuery.Window(skip, limit), true);
        long most = 0;
        for (BsonDocument d : docs) {
            byte[] bytes = bytes(d);
            m.examine(bytes, 0, bytes.length);
            java.util.Arrays.fill(bytes, (byte) 0); // the batch's buffer is reused: nothing kept may refer to it
            most = Math.max(most, m.keptBytes());
        }
        assertEquals(docs.size(), m.examined());
        if (m.mostHeld() != Long.MAX_VALUE) {
            assertTrue(most <= m.mostHeld() * 60, "held " + most + " bytes"); // each candidate is under 60 bytes
        }
        return m;
    }

    @Test
    void aSortWithALimitKeepsTheBestAndAnswersAsEveryMatchWould() {
        for (long seed = 0; seed < 40; seed++) {
            List<BsonDocument> docs = candidates(seed, 1000);
            for (long[] w : new long[][] {{0, 1}, {0, 10}, {3, 50}, {100, -20}, {0, 0}, {490, 30}, {2000, 5}}) {
                MatchedCandidates m = examined(docs, BY_X, false, w[0], w[1]);
                List<BsonDocument> answer = CandidateWindow.apply(m.kept(), w[0], w[1]);
                assertEquals(ids(everyMatch(docs, BY_X, w[0], w[1])), ids(answer), "seed " + seed + " window " + w[0] + "," + w[1]);
                for (BsonDocument d : answer) {
                    assertNotNull(m.asRead(d), "answered in the bytes it was read as");
                }
            }
        }
    }

    @Test
    void aLimitWithoutSortKeepsTheFirstMatchesAndACountKeepsNone() {
        List<BsonDocument> docs = candidates(7, 500);
        MatchedCandidates first = examined(docs, null, false, 2, 5);
        assertEquals(ids(everyMatch(docs, null, 2, 5)), ids(CandidateWindow.apply(first.kept(), 2, 5)));
        assertEquals(7, first.kept().size());

        MatchedCandidates count = examined(docs, null, true, 10, 0);
        assertEquals(0, count.kept().size());
        assertEquals(0, count.keptBytes());
        assertEquals(everyMatch(docs, null, 10, 0).size(), CandidateWindow.size(count.matched(), 10, 0));
    }

    @Test
    void withoutAWindowEveryMatchIsKept() {
        List<BsonDocument> docs = candidates(3, 300);
        MatchedCandidates m = new MatchedCandidates(EVEN, BY_X, false, null, false);
        for (BsonDocument d : docs) {
            byte[] bytes = bytes(d);
            m.examine(bytes, 0, bytes.length);
        }
        assertEquals(ids(everyMatch(docs, BY_X, 0, 0)), ids(m.kept()));
        assertEquals(Long.MAX_VALUE, m.mostHeld());
    }

    /** A candidate as a batch holds it: its bytes, after a few of another's (examined at an offset). */
    private static byte[] bytes(BsonDocument d) {
        RawBsonDocument raw = new RawBsonDocument(d, new BsonDocumentCodec());
        java.nio.ByteBuffer b = raw.getByteBuffer().asNIO();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static List<Integer> ids(List<BsonDocument> docs) {
        List<Integer> out = new ArrayList<>();
        docs.forEach(d -> out.add(d.getInt32("_id").getValue()));
        return out;
    }
}
