package dev.fleproxy.rewrite.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.policy.RangeIndex;
import java.math.BigDecimal;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** A range's cover holds exactly its positions, and a stored value carries a tag of the node that covers it. */
class RangeCoverTest {

    private static RangeIndex index(long min, long max, int precision, int sparsity) {
        return new RangeIndex(BigDecimal.valueOf(min), BigDecimal.valueOf(max), precision, sparsity);
    }

    @Test
    void aCoverHoldsEveryPositionOfItsRangeOnceAndNothingElse() {
        Random r = new Random(42);
        for (int sparsity = 1; sparsity <= 4; sparsity++) {
            RangeIndex idx = index(0, 5000, 0, sparsity);
            for (int i = 0; i < 300; i++) {
                long a = r.nextInt(5001);
                long b = a + r.nextInt((int) (5001 - a));
                List<RangeCover.Node> cover = RangeCover.of(idx, a, b);
                long next = a;
                for (RangeCover.Node n : cover) {
                    assertEquals(next, n.start(), "contiguous from the left");
                    assertTrue(idx.stored(n.level()), "only stored levels");
                    assertEquals(0, n.start() & ((1L << n.level()) - 1), "a node starts on its boundary");
                    next = n.start() + (1L << n.level());
                }
                assertEquals(b + 1, next, "ends at the range's end");
                assertTrue(cover.size() <= 2 * idx.bits() * ((1 << sparsity) - 1), "bounded: " + cover.size());
            }
        }
    }

    @Test
    void theGridIsMinToMaxInStepsOfThePrecision() {
        RangeIndex idx = new RangeIndex(new BigDecimal("-1000"), new BigDecimal("1000"), 2, 1);
        assertEquals(18, idx.bits());
        assertEquals(101234, idx.position(new BigDecimal("12.345")));
        assertEquals(0, idx.position(new BigDecimal("-1000")));
        assertEquals(-1, idx.position(new BigDecimal("-1000.01")));
        assertEquals(-2, idx.position(new BigDecimal("1000.01")));
    }

    @Test
    void aQueryCoversItsBoundsAndLeavesWhatItCannotReadToTheProxy() {
        RangeIndex idx = index(0, 1023, 0, 1);
        // [100, 200]: one leaf-to-node walk; every value inside has a node of the cover among its tags
        List<RangeCover.Node> cover = RangeQuery.cover(BsonDocument.parse("{$gt: 100, $lte: 200, $ne: 150}"), idx);
        assertEquals(100, cover.get(0).start());
        RangeCover.Node last = cover.get(cover.size() - 1);
        assertEquals(200, last.start() + (1L << last.level()) - 1);
        // the tighter of two bounds on a side
        cover = RangeQuery.cover(BsonDocument.parse("{$gte: 10, $gt: 20, $lt: 30}"), idx);
        assertEquals(20, cover.get(0).start());
        // an equality and an $in of numbers: points
        assertEquals(List.of(new RangeCover.Node(0, 7)), RangeQuery.cover(BsonDocument.parse("{a: 7}").get("a"), idx));
        assertEquals(3, RangeQuery.cover(BsonDocument.parse("{$in: [1, 2.5, {$numberLong: '9'}]}"), idx).size());
        // open ends run to the grid's ends; bounds off the grid
        assertEquals(0, RangeQuery.cover(BsonDocument.parse("{$lt: 5}"), idx).get(0).start());
        assertEquals(List.of(), RangeQuery.cover(BsonDocument.parse("{$gt: 5000}"), idx));
        assertEquals(List.of(), RangeQuery.cover(BsonDocument.parse("{$gt: 50, $lt: 10}"), idx));
        // nothing numeric: no narrowing
        assertNull(RangeQuery.cover(BsonDocument.parse("{$gt: 'a'}"), idx));
        assertNull(RangeQuery.cover(BsonDocument.parse("{$in: [1, 'a']}"), idx));
        assertNull(RangeQuery.cover(BsonDocument.parse("{$not: {$gt: 5}}"), idx));
        assertNull(RangeQuery.cover(BsonDocument.parse("{a: 'x'}").get("a"), idx));
    }

    @Test
    void everyValueInARangeIsFoundByItsCoverAtEverySparsity() {
        Random r = new Random(7);
        for (int sparsity = 1; sparsity <= 3; sparsity++) {
            RangeIndex idx = new RangeIndex(new BigDecimal("-50"), new BigDecimal("50"), 1, sparsity);
            for (int i = 0; i < 500; i++) {
                double a = -60 + r.nextDouble() * 120;
                double b = a + r.nextDouble() * 40;
                double v = a + r.nextDouble() * (b - a);
                BsonDocument q = new BsonDocument("$gte", new org.bson.BsonDouble(a)).append("$lte", new org.bson.BsonDouble(b));
                List<RangeCover.Node> cover = RangeQuery.cover(q, idx);
                long p = idx.position(new BigDecimal(v));
                if (p < 0) {
                    continue; // off the grid: "other", asked by every range
                }
                boolean found = false;
                for (RangeCover.Node n : cover) {
                    found |= p >= n.start() && p < n.start() + (1L << n.level());
                }
                assertTrue(found, v + " in [" + a + ", " + b + "]");
            }
        }
    }
}
