package dev.fleproxy.rewrite.search;

import dev.fleproxy.crypto.RangeTags;
import dev.fleproxy.crypto.TextTags;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.policy.RangeIndex;
import dev.fleproxy.policy.TextIndex;
import dev.fleproxy.wire.BsonCursor;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * Where and what the proxy stores for its search indexes: beside a document's envelopes, the
 * top-level field {@value #FIELD}, a sub-document with one array of tags per indexed field
 * ({@code __fle: {price: [BinData(0, …), …]}}, every index's of the field in one array), which the
 * server indexes (multikey) and a query's tags are matched against. Clients never see it, name it, or write it.
 */
public final class SearchTags {
    /** The proxy's own top-level field on collections with search indexes. */
    public static final String FIELD = RangeIndex.TAG_FIELD;
    /** Binary subtype of a tag: generic. */
    private static final byte SUBTYPE = 0;

    private SearchTags() {
    }

    /** The path of one indexed field's tags ("__fle.price"). */
    public static String path(String field) {
        return FIELD + "." + field;
    }

    /** True for the tag field or a path into it. */
    public static boolean reserved(String path) {
        return path.equals(FIELD) || path.startsWith(FIELD + ".");
    }

    /**
     * True if a filter or expression names the tag field anywhere: as a key at any depth, or as a
     * field reference ("$__fle…", "$$ROOT.__fle…", "$$CURRENT.__fle…").
     */
    public static boolean named(BsonValue v) {
        if (v.isDocument()) {
            for (java.util.Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                if (reserved(e.getKey()) || named(e.getValue())) {
                    return true;
                }
            }
        } else if (v.isArray()) {
            for (BsonValue x : v.asArray()) {
                if (named(x)) {
                    return true;
                }
            }
        } else if (v.isString()) {
            String s = v.asString().getValue();
            for (String prefix : new String[] {"$", "$$ROOT.", "$$CURRENT."}) {
                if (s.startsWith(prefix) && reserved(s.substring(prefix.length()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** A field's tag makers under one key: its range index's (null: none) and each of its text indexes'. */
    public record FieldTags(RangeTags range, Map<TextTags.Kind, TextTags> text) {
        public FieldTags {
            text = Map.copyOf(text);
        }

        /** The tag makers of each index on the rule's field, under this key. */
        public static FieldTags of(FieldRule rule, dev.fleproxy.crypto.DataKey key, String namespace) {
            Map<TextTags.Kind, TextTags> text = new java.util.EnumMap<>(TextTags.Kind.class);
            for (TextIndex t : rule.text()) {
                text.put(t.kind(), TextTags.of(key, namespace, rule.path(), t.kind()));
            }
            return new FieldTags(rule.range() == null ? null : RangeTags.of(key, namespace, rule.path()), text);
        }
    }

    /**
     * The tags stored for a value given as its BSON type and value bytes, buf[start, end): those of
     * each index on the field, in one array (each kind's tags are HMACs under a key of its own).
     */
    public static BsonArray stored(FieldRule rule, FieldTags tags, byte type, byte[] buf, int start, int end) {
        BsonArray out = new BsonArray();
        if (rule.range() != null) {
            range(rule.range(), tags.range(), type, buf, start, out);
        }
        for (TextIndex t : rule.text()) {
            text(t, tags.text().get(t.kind()), type, buf, start, out);
        }
        return out;
    }

    /**
     * A number on the grid (a date, on a dates index): one per stored level; other numbers (dates)
     * and arrays (a range may match an element) "other"; anything else "none".
     */
    private static void range(RangeIndex index, RangeTags tags, byte type, byte[] buf, int start, BsonArray out) {
        if (type == BsonCursor.ARRAY) {
            out.add(tag(tags.other()));
            return;
        }
        if (index.dates() ? type != 0x09 : !RangeNumbers.isNumber(type)) {
            out.add(tag(tags.none())); // a range of the other kind (dates, numbers) never matches it
            return;
        }
        BigDecimal v = index.dates() ? BigDecimal.valueOf(RangeNumbers.le(buf, start, 8))
                : RangeNumbers.decimal(type, buf, start);
        long position = v == null ? -1 : index.position(v);
        if (position < 0) {
            out.add(tag(tags.other()));
            return;
        }
        for (int level = 0; level < index.bits(); level++) {
            if (index.stored(level)) {
                out.add(tag(tags.node(level, position)));
            }
        }
    }

    /**
     * A string: the tags of the index's kind ({@link #pieces}); an array "other" (a regex may match
     * an element); anything else, or a string none of whose pieces a query asks for, "none".
     */
    private static void text(TextIndex index, TextTags tags, byte type, byte[] buf, int start, BsonArray out) {
        if (type == BsonCursor.ARRAY) {
            out.add(tag(tags.other()));
            return;
        }
        if (type != 0x02) {
            out.add(tag(tags.none()));
            return;
        }
        int length = (int) RangeNumbers.le(buf, start, 4) - 1; // int32 byte count with the NUL
        Set<String> pieces = pieces(index, index.fold(new String(buf, start + 4, length,
                java.nio.charset.StandardCharsets.UTF_8)));
        if (pieces == null) {
            out.add(tag(tags.other()));
        } else if (pieces.isEmpty()) {
            out.add(tag(tags.none()));
        } else if (index.kind() == TextTags.Kind.SUBSTRING) {
            // in the tags' own order, not the string's: where each n-gram stands is not told
            Set<byte[]> sorted = new TreeSet<>(Arrays::compareUnsigned);
            pieces.forEach(p -> sorted.add(tags.text(p)));
            sorted.forEach(b -> out.add(tag(b)));
        } else {
            pieces.forEach(p -> out.add(tag(tags.text(p))));
        }
    }

    /**
     * What a folded string is tagged with: its prefixes (suffixes) of minLength … maxLength code
     * points, or its distinct n-grams (n = minLength); empty when it has none a query can ask for
     * (shorter than minLength), null for a string longer than a substring index reads (maxLength
     * code points: tagged "other", a candidate for every query). A string ending in a newline also
     * has the suffixes of what precedes it: {@code $} matches before a final newline too.
     */
    static Set<String> pieces(TextIndex index, String folded) {
        Set<String> out = new LinkedHashSet<>();
        int n = folded.codePointCount(0, folded.length());
        switch (index.kind()) {
            case PREFIX -> {
                for (int k = index.minLength(); k <= Math.min(index.maxLength(), n); k++) {
                    out.add(folded.substring(0, folded.offsetByCodePoints(0, k)));
                }
            }
            case SUFFIX -> {
                suffixes(index, folded, n, out);
                if (folded.endsWith("\n")) {
                    String before = folded.substring(0, folded.length() - 1);
                    suffixes(index, before, n - 1, out);
                }
            }
            case SUBSTRING -> {
                if (n > index.maxLength()) {
                    return null;
                }
                for (int k = 0; k + index.minLength() <= n; k++) {
                    int from = folded.offsetByCodePoints(0, k);
                    out.add(folded.substring(from, folded.offsetByCodePoints(from, index.minLength())));
                }
            }
            default -> throw new IllegalStateException(index.kind().toString());
        }
        return out;
    }

    private static void suffixes(TextIndex index, String s, int codePoints, Collection<String> out) {
        for (int k = index.minLength(); k <= Math.min(index.maxLength(), codePoints); k++) {
            out.add(s.substring(s.offsetByCodePoints(s.length(), -k)));
        }
    }

    /** The tags of a field whose document does not hold it: each index's "none". */
    public static BsonArray absent(FieldRule rule, FieldTags tags) {
        BsonArray out = new BsonArray();
        if (rule.range() != null) {
            out.add(tag(tags.range().none()));
        }
        for (TextIndex t : rule.text()) {
            out.add(tag(tags.text().get(t.kind()).none()));
        }
        return out;
    }

    /** What a query asks the server to match for a cover, under each opening key's tags: the nodes, "other", and null. */
    public static List<BsonValue> asked(List<RangeCover.Node> cover, List<RangeTags> underEveryKey) {
        List<BsonValue> out = new ArrayList<>();
        for (RangeTags t : underEveryKey) {
            for (RangeCover.Node n : cover) {
                out.add(tag(t.node(n.level(), n.start())));
            }
            out.add(tag(t.other()));
        }
        // a document written before the index (or whose tags a write dropped) holds none: always a candidate
        out.add(org.bson.BsonNull.VALUE);
        return out;
    }

    static BsonBinary tag(byte[] b) {
        return new BsonBinary(SUBTYPE, b);
    }

    /** Numbers as a range index reads them. */
    static final class RangeNumbers {
        private RangeNumbers() {
        }

        static boolean isNumber(byte type) {
            return type == 0x01 || type == 0x10 || type == 0x12 || type == 0x13;
        }

        /** The exact value of a number's bytes at buf[start…); null for NaN and the infinities. */
        static BigDecimal decimal(byte type, byte[] buf, int start) {
            switch (type) {
                case 0x10:
                    return BigDecimal.valueOf(le(buf, start, 4) << 32 >> 32);
                case 0x12:
                    return BigDecimal.valueOf(le(buf, start, 8));
                case 0x01: {
                    double d = Double.longBitsToDouble(le(buf, start, 8));
                    return Double.isFinite(d) ? new BigDecimal(d) : null;
                }
                default: {
                    return decimal128(Decimal128.fromIEEE754BIDEncoding(le(buf, start + 8, 8), le(buf, start, 8)));
                }
            }
        }

        /** A BSON value's exact number, or null if it is none (or NaN, or infinite). */
        static BigDecimal decimal(BsonValue v) {
            if (v.isInt32()) {
                return BigDecimal.valueOf(v.asInt32().getValue());
            }
            if (v.isInt64()) {
                return BigDecimal.valueOf(v.asInt64().getValue());
            }
            if (v.isDouble()) {
                double d = v.asDouble().getValue();
                return Double.isFinite(d) ? new BigDecimal(d) : null;
            }
            if (v.isDecimal128()) {
                return decimal128(v.asDecimal128().getValue());
            }
            return null;
        }

        private static BigDecimal decimal128(Decimal128 d) {
            if (d.isNaN() || d.isInfinite()) {
                return null;
            }
            try {
                return d.bigDecimalValue();
            } catch (ArithmeticException negativeZero) {
                return BigDecimal.ZERO; // -0 (BigDecimal has none), equal to 0 as MongoDB compares it
            }
        }

        static long le(byte[] b, int off, int n) {
            long v = 0;
            for (int i = n - 1; i >= 0; i--) {
                v = (v << 8) | (b[off + i] & 0xFF);
            }
            return v;
        }
    }
}
