package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ConfigSchema;
import dev.fleproxy.crypto.TextTags;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A field's {@code index:} option: {@code index: {range: {min: 0, max: 1000000, precision: 0,
 * sparsity: 1}, prefix: {minLength: 1, maxLength: 16, caseFold: false, diacriticFold: false},
 * suffix: {…as prefix}, substring: {gramLength: 3, maxLength: 256, caseFold: false,
 * diacriticFold: false}}}, any of them. Only top-level fields: the tags of a field inside arrays of documents would
 * have to follow every element a write adds or removes.
 */
final class SearchIndexParser {
    private static final Set<String> INDEX_KEYS = ConfigSchema.keysOf("collections.*.fields.*.index");
    private static final Set<String> RANGE_KEYS = ConfigSchema.keysOf("collections.*.fields.*.index.range");

    private SearchIndexParser() {
    }

    /** The range index the option describes, or null without one. */
    static RangeIndex range(Object node, String path, String where) {
        if (node == null) {
            return null;
        }
        Map<?, ?> index = mapping(node, where, INDEX_KEYS);
        if (INDEX_KEYS.stream().allMatch(k -> index.get(k) == null)) {
            throw new ConfigException(where + " names no index; known kinds are " + INDEX_KEYS);
        }
        if (path.contains(".")) {
            throw new ConfigException(where + ": a search index is on a top-level field only, not '" + path + "'");
        }
        Object r = index.get("range");
        if (r == null) {
            return null;
        }
        Map<?, ?> range = mapping(r, where + ".range", RANGE_KEYS);
        Object type = range.get("type");
        if (type != null && !"number".equals(type) && !"date".equals(type)) {
            throw new ConfigException(where + ".range.type must be number or date, not " + type);
        }
        boolean dates = "date".equals(type);
        BigDecimal min = dates ? date(range.get("min"), where + ".range.min") : number(range.get("min"), where + ".range.min");
        BigDecimal max = dates ? date(range.get("max"), where + ".range.max") : number(range.get("max"), where + ".range.max");
        int precision = integer(range.get("precision"), ConfigSchema.FIELD_RANGE_PRECISION, where + ".range.precision");
        if (dates && precision != 0) {
            throw new ConfigException(where + ".range.precision: a date index's steps are milliseconds (precision 0)");
        }
        int sparsity = integer(range.get("sparsity"), ConfigSchema.FIELD_RANGE_SPARSITY, where + ".range.sparsity");
        if (min.compareTo(max) >= 0) {
            throw new ConfigException(where + ".range: min (" + min + ") must be below max (" + max + ")");
        }
        try {
            return new RangeIndex(min, max, precision, sparsity, dates);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ".range: (max - min) * 10^precision is over 2^" + RangeIndex.MAX_BITS
                    + "; narrow the bounds or lower the precision");
        }
    }

    /** The text indexes the option describes, one per kind it names (its form checked by {@link #range} first). */
    static List<TextIndex> text(Object node, String where) {
        List<TextIndex> out = new ArrayList<>();
        if (node == null) {
            return out;
        }
        for (TextTags.Kind kind : TextTags.Kind.values()) {
            Object option = ((Map<?, ?>) node).get(kind.key());
            if (option == null) {
                continue;
            }
            String at = where + "." + kind.key();
            Map<?, ?> m = mapping(option, at, ConfigSchema.keysOf("collections.*.fields.*.index." + kind.key()));
            boolean grams = kind == TextTags.Kind.SUBSTRING;
            int min = grams ? integer(m.get("gramLength"), ConfigSchema.FIELD_SUBSTRING_GRAM_LENGTH, at + ".gramLength")
                    : integer(m.get("minLength"), kind == TextTags.Kind.PREFIX ? ConfigSchema.FIELD_PREFIX_MIN_LENGTH
                            : ConfigSchema.FIELD_SUFFIX_MIN_LENGTH, at + ".minLength");
            int max = integer(m.get("maxLength"), grams ? ConfigSchema.FIELD_SUBSTRING_MAX_LENGTH
                    : kind == TextTags.Kind.PREFIX ? ConfigSchema.FIELD_PREFIX_MAX_LENGTH
                    : ConfigSchema.FIELD_SUFFIX_MAX_LENGTH, at + ".maxLength");
            if (max < min) {
                throw new ConfigException(at + ": maxLength (" + max + ") is below " + (grams ? "gramLength" : "minLength")
                        + " (" + min + ")");
            }
            out.add(new TextIndex(kind, min, max, bool(m.get("caseFold"), at + ".caseFold"),
                    bool(m.get("diacriticFold"), at + ".diacriticFold")));
        }
        return out;
    }

    private static boolean bool(Object v, String where) {
        if (v == null) {
            return false;
        }
        if (!(v instanceof Boolean b)) {
            throw new ConfigException(where + " must be true or false, not " + v);
        }
        return b;
    }

    private static Map<?, ?> mapping(Object node, String where, Set<String> known) {
        if (!(node instanceof Map<?, ?> m)) {
            throw new ConfigException(where + " must be a mapping of " + known);
        }
        Set<String> unknown = new TreeSet<>();
        m.keySet().forEach(k -> {
            if (!known.contains(String.valueOf(k))) {
                unknown.add(String.valueOf(k));
            }
        });
        if (!unknown.isEmpty()) {
            throw new ConfigException(where + ": unknown key(s) " + unknown + "; known keys are " + known);
        }
        return m;
    }

    /** A date as YAML gives it (a timestamp: 2024-01-01, 2024-01-01T12:00:00Z) or an ISO-8601 string, in milliseconds. */
    private static BigDecimal date(Object v, String where) {
        if (v instanceof java.util.Date d) {
            return BigDecimal.valueOf(d.getTime());
        }
        if (v instanceof String s) {
            try {
                return BigDecimal.valueOf(java.time.Instant.parse(s).toEpochMilli());
            } catch (java.time.format.DateTimeParseException e) {
                // refused below
            }
        }
        throw new ConfigException(where + " must be a date (2024-01-01, 2024-01-01T12:00:00Z), not " + v);
    }

    private static BigDecimal number(Object v, String where) {
        if (!(v instanceof Number n) || n instanceof Double d && !Double.isFinite(d)) {
            throw new ConfigException(where + " must be a number, not " + v);
        }
        return new BigDecimal(n.toString());
    }

    private static int integer(Object v, ConfigSchema.Setting s, String where) {
        if (v == null) {
            return s.intDefault();
        }
        if (!(v instanceof Integer n) || n < s.min() || n > s.max()) {
            throw new ConfigException(where + " must be an integer " + s.min() + "-" + s.max() + ", not " + v);
        }
        return n;
    }
}
