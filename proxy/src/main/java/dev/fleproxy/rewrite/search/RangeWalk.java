package dev.fleproxy.rewrite.search;

import dev.fleproxy.crypto.RangeTags;
import dev.fleproxy.policy.RangeIndex;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * A sort by a range-indexed field with a limit, read from one end of the grid in widening steps
 * (docs/query-model.md#range-indexes): first the documents of a window of positions at that end
 * (with "other", "none" and those without tags, which may sort anywhere), then rings of positions
 * next to it, each four times wider, until the best skip + limit documents are certain. Every
 * document not yet read lies further along the grid, so its value is past the {@link #boundary}:
 * once the last of the best read so far sorts before the boundary, nothing unread can displace
 * it. At the grid's far end the whole collection has been read.
 */
public final class RangeWalk {
    /**
     * The first window holds 1/16384 of the grid: about 60 of 1,000,000 documents spread evenly
     * (1/1024 read 1,577 for a top 10 there); with fewer, a ring or two more.
     */
    static final int FIRST_LEVELS_BELOW_TOP = 14;
    /** Each ring widens the positions read by 2^GROWTH. */
    static final int GROWTH = 2;

    private final String field;
    private final RangeIndex index;
    private final List<RangeTags> underEveryKey;
    private final boolean descending;
    /** Positions read so far are those below 2^level (ascending) or above top − 2^level (descending). */
    private int level;
    /** max's position: the grid's last position that can hold a value (those past it are "other"). */
    private final long top;

    public RangeWalk(String field, RangeIndex index, List<RangeTags> underEveryKey, boolean descending) {
        this.field = field;
        this.index = index;
        this.underEveryKey = underEveryKey;
        this.descending = descending;
        this.level = Math.max(0, index.bits() - FIRST_LEVELS_BELOW_TOP);
        this.top = index.position(index.max());
    }

    public String field() {
        return field;
    }

    public boolean descending() {
        return descending;
    }

    /** What the first read asks the server to match besides the query's filter. */
    public BsonDocument first() {
        List<BsonValue> asked = SearchTags.asked(nodes(0, span(level)), underEveryKey);
        for (RangeTags t : underEveryKey) {
            // what no range matches sorts all the same: null and missing before numbers, strings … after
            asked.add(new org.bson.BsonBinary((byte) 0, t.none()));
        }
        return new BsonDocument(SearchTags.path(field), new BsonDocument("$in", new BsonArray(asked)));
    }

    /** True once the whole grid has been read: nothing is left unread. */
    public boolean done() {
        return span(level) > top;
    }

    /** Widens the positions read and gives what the next read asks for: only the ring of new positions. */
    public BsonDocument next() {
        long from = span(level);
        level = Math.min(index.bits(), level + GROWTH);
        List<BsonValue> asked = new ArrayList<>();
        for (RangeTags t : underEveryKey) {
            for (RangeCover.Node n : nodes(from, span(level))) {
                asked.add(new org.bson.BsonBinary((byte) 0, t.node(n.level(), n.start())));
            }
        }
        return new BsonDocument(SearchTags.path(field), new BsonDocument("$in", new BsonArray(asked)));
    }

    /**
     * {field: v}, v the value every unread document's field reaches (ascending: at least v) or stays
     * below (descending: under v): the first position not read, on the grid.
     */
    public BsonDocument boundary() {
        long edge = descending ? top + 1 - span(level) : span(level);
        BigDecimal v = index.min().add(BigDecimal.valueOf(edge).movePointLeft(index.precision()));
        // of the index's kind: in BSON's order every number sorts before every date
        if (index.dates()) {
            return new BsonDocument(field, new org.bson.BsonDateTime(v.longValueExact()));
        }
        // Decimal128 holds 34 digits: rounded towards what is read (down ascending, up descending),
        // so that a rounded boundary can only make the best less certain, never wrongly certain
        java.math.MathContext round = new java.math.MathContext(34,
                descending ? java.math.RoundingMode.CEILING : java.math.RoundingMode.FLOOR);
        return new BsonDocument(field, new BsonDecimal128(new Decimal128(v.round(round))));
    }

    /** 2^level positions from the walk's end (at level = bits, the whole grid: 2^bits > top). */
    private static long span(int l) {
        return 1L << l;
    }

    /** The nodes covering the positions at distance [from, to) from the walk's end, within [0, top]. */
    private List<RangeCover.Node> nodes(long from, long to) {
        to = Math.min(to, top + 1);
        if (from >= to) {
            return List.of();
        }
        return descending ? RangeCover.of(index, top + 1 - to, top - from) : RangeCover.of(index, from, to - 1);
    }
}
