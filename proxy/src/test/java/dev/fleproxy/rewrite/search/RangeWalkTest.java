package dev.fleproxy.rewrite.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.RangeTags;
import dev.fleproxy.policy.RangeIndex;
import java.math.BigDecimal;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/** A walk reads every position of the grid once, from its end, and its boundary bounds what is left unread. */
class RangeWalkTest {
    private static final RangeTags TAGS = RangeTags.of(new DataKey(UUID.randomUUID(), CipherAlgorithm.AES,
            new byte[32]), "db.c", "x");

    private static Set<String> asked(BsonDocument condition) {
        Set<String> out = new HashSet<>();
        BsonArray in = condition.getDocument("__fle.x").getArray("$in");
        for (BsonValue v : in) {
            out.add(v.isBinary() ? java.util.HexFormat.of().formatHex(((BsonBinary) v).getData()) : "null");
        }
        return out;
    }

    @Test
    void everyPositionIsAskedForOnceFromTheEndTheSortStartsAt() {
        for (boolean descending : new boolean[] {false, true}) {
            RangeIndex index = new RangeIndex(BigDecimal.ZERO, new BigDecimal("4999"), 0, 1); // 13 bits
            RangeWalk w = new RangeWalk("x", index, List.of(TAGS), descending);
            Set<String> first = asked(w.first());
            assertTrue(first.contains("null") && first.contains(java.util.HexFormat.of().formatHex(TAGS.other()))
                    && first.contains(java.util.HexFormat.of().formatHex(TAGS.none())),
                    "the first read takes other, none (null and missing sort first, strings … after numbers) and "
                            + "untagged documents");
            Set<String> all = new HashSet<>(first);
            int reads = 1;
            BigDecimal previous = null;
            while (!w.done()) {
                BigDecimal b = w.boundary().getDecimal128("x").getValue().bigDecimalValue();
                if (previous != null) {
                    assertTrue(descending ? b.compareTo(previous) < 0 : b.compareTo(previous) > 0, "it moves on");
                }
                previous = b;
                Set<String> ring = asked(w.next());
                for (String t : ring) {
                    assertTrue(all.add(t), "a node asked for twice");
                }
                reads++;
            }
            assertTrue(reads <= 8, "from 2^0 to 2^13 positions in steps of 4: " + reads);
            assertTrue(w.done());
            for (long p : new long[] {0, 1, 7, 8, 100, 4095, 4096, 4999}) {
                // every position is held by some node asked for, at some stored level
                boolean found = false;
                for (int level = 0; level < index.bits(); level++) {
                    found |= all.contains(java.util.HexFormat.of().formatHex(TAGS.node(level, p)));
                }
                assertTrue(found, "position " + p);
            }
        }
    }

    @Test
    void theBoundaryIsTheFirstValueNotRead() {
        RangeIndex index = new RangeIndex(new BigDecimal("-10"), new BigDecimal("10"), 1, 1); // 200 steps of 0.1: 8 bits
        RangeWalk up = new RangeWalk("x", index, List.of(TAGS), false);
        RangeWalk down = new RangeWalk("x", index, List.of(TAGS), true);
        // the first window: 2^0 positions at each end (8 bits − 14 levels, at least 0)
        assertEquals(0, new BigDecimal("-9.9").compareTo(up.boundary().getDecimal128("x").getValue().bigDecimalValue()));
        assertEquals(0, new BigDecimal("10").compareTo(down.boundary().getDecimal128("x").getValue().bigDecimalValue()),
                "descending from max's position (200), not the 8-bit grid's last (255): unread values are below 10");
        assertFalse(up.done());
        while (!down.done()) {
            down.next();
        }
        assertTrue(down.boundary().getDecimal128("x").getValue().bigDecimalValue().compareTo(new BigDecimal("-10")) <= 0);
    }
}
