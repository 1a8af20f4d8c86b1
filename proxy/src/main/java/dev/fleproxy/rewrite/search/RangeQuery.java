package dev.fleproxy.rewrite.search;

import dev.fleproxy.crypto.RangeTags;
import dev.fleproxy.policy.RangeIndex;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What the server is asked to match for one conjunct on a range-indexed field, so that it returns
 * only candidates whose tags cover the conjunct's numbers (the proxy still evaluates the
 * conjunct exactly on plaintext): a necessary condition, never a sufficient one. Read from the
 * conjunct: its numeric bounds ($gt, $gte, $lt, $lte, $eq, or an equality with a number; dates on a
 * dates index), or an $in of them; its other operators are ANDed with them and only narrow further, so they are
 * left to the proxy. A conjunct with nothing of these (a string range, $not, $exists …) gets no
 * condition: its candidates are what they were.
 */
public final class RangeQuery {
    /** More points or nodes than this and the index is not worth asking: the candidates are read as before. */
    static final int MAX_ASKED = 1_000;

    private RangeQuery() {
    }

    /**
     * The server condition for {@code conjunct} (one field: {@code field}) under the tags of every
     * opening key, or null if the index does not narrow it.
     */
    public static BsonDocument condition(String field, BsonValue conjunct, RangeIndex index, List<RangeTags> underEveryKey) {
        List<RangeCover.Node> cover = cover(conjunct, index);
        if (cover == null || cover.size() * underEveryKey.size() > MAX_ASKED) {
            return null;
        }
        return new BsonDocument(SearchTags.path(field), new BsonDocument("$in",
                new BsonArray(SearchTags.asked(cover, underEveryKey))));
    }

    /** The nodes whose tags a matching value's document must carry (besides "other"), or null for no narrowing. */
    static List<RangeCover.Node> cover(BsonValue conjunct, RangeIndex index) {
        if (!conjunct.isDocument() || conjunct.asDocument().keySet().stream().noneMatch(k -> k.startsWith("$"))) {
            BigDecimal v = bound(conjunct, index);
            return v == null ? null : between(index, v, v);
        }
        BigDecimal lo = null;
        BigDecimal hi = null;
        List<BigDecimal> points = null;
        for (Map.Entry<String, BsonValue> e : conjunct.asDocument().entrySet()) {
            String op = e.getKey();
            if (op.equals("$in")) {
                points = points(e.getValue(), index);
                continue;
            }
            boolean lower = op.equals("$gt") || op.equals("$gte") || op.equals("$eq");
            boolean upper = op.equals("$lt") || op.equals("$lte") || op.equals("$eq");
            if (!lower && !upper) {
                continue; // ANDed with the bounds: leaves them necessary
            }
            BigDecimal v = bound(e.getValue(), index);
            if (v == null) {
                continue; // a bound of another type (or NaN, ±Infinity) narrows nothing here
            }
            if (lower && (lo == null || v.compareTo(lo) > 0)) {
                lo = v;
            }
            if (upper && (hi == null || v.compareTo(hi) < 0)) {
                hi = v;
            }
        }
        if (lo != null || hi != null) {
            return between(index, lo, hi);
        }
        if (points != null) {
            List<RangeCover.Node> out = new ArrayList<>();
            for (BigDecimal p : points) {
                out.addAll(between(index, p, p));
            }
            return out;
        }
        return null;
    }

    /** A bound's place on the index's line: a number's value, or a date's milliseconds on a dates index; else null. */
    private static BigDecimal bound(BsonValue v, RangeIndex index) {
        if (index.dates()) {
            return v.isDateTime() ? BigDecimal.valueOf(v.asDateTime().getValue()) : null;
        }
        return SearchTags.RangeNumbers.decimal(v);
    }

    /** An $in's numbers, or null if it holds anything else (a string, a regex, null …) or too many. */
    private static List<BigDecimal> points(BsonValue in, RangeIndex index) {
        if (!in.isArray() || in.asArray().size() > MAX_ASKED) {
            return null;
        }
        List<BigDecimal> out = new ArrayList<>();
        for (BsonValue v : in.asArray()) {
            BigDecimal d = bound(v, index);
            if (d == null) {
                return null;
            }
            out.add(d);
        }
        return out;
    }

    /** The cover of the grid positions [lo, hi] reach (either open); values off the grid are "other", asked always. */
    private static List<RangeCover.Node> between(RangeIndex index, BigDecimal lo, BigDecimal hi) {
        if (lo != null && hi != null && lo.compareTo(hi) > 0) {
            return List.of();
        }
        if (lo != null && lo.compareTo(index.max()) > 0 || hi != null && hi.compareTo(index.min()) < 0) {
            return List.of();
        }
        long from = lo == null || lo.compareTo(index.min()) < 0 ? 0 : index.position(lo);
        long to = hi == null || hi.compareTo(index.max()) > 0 ? index.lastPosition() : index.position(hi);
        return RangeCover.of(index, from, to);
    }
}
