package dev.fleproxy.rewrite.evaluate;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * $type: the value's BSON type is one of a set given by codes (1 double ... 19 decimal, -1
 * minKey, 127 maxKey) or aliases ("double", "string", ..., and "number" for all four numeric
 * types). On an array field it matches when an element has the type, or, for "array", the field
 * itself is an array (the path walk yields both).
 */
final class TypeSet implements Leaf {
    private static final Map<String, BsonType> ALIASES = Map.ofEntries(
            Map.entry("double", BsonType.DOUBLE), Map.entry("string", BsonType.STRING),
            Map.entry("object", BsonType.DOCUMENT), Map.entry("array", BsonType.ARRAY),
            Map.entry("binData", BsonType.BINARY), Map.entry("undefined", BsonType.UNDEFINED),
            Map.entry("objectId", BsonType.OBJECT_ID), Map.entry("bool", BsonType.BOOLEAN),
            Map.entry("date", BsonType.DATE_TIME), Map.entry("null", BsonType.NULL),
            Map.entry("regex", BsonType.REGULAR_EXPRESSION), Map.entry("dbPointer", BsonType.DB_POINTER),
            Map.entry("javascript", BsonType.JAVASCRIPT), Map.entry("symbol", BsonType.SYMBOL),
            Map.entry("javascriptWithScope", BsonType.JAVASCRIPT_WITH_SCOPE), Map.entry("int", BsonType.INT32),
            Map.entry("timestamp", BsonType.TIMESTAMP), Map.entry("long", BsonType.INT64),
            Map.entry("decimal", BsonType.DECIMAL128), Map.entry("minKey", BsonType.MIN_KEY),
            Map.entry("maxKey", BsonType.MAX_KEY));

    /** The server's alias of a type ("string", "int", …), as its error messages name it. */
    static String alias(BsonType type) {
        for (Map.Entry<String, BsonType> e : ALIASES.entrySet()) {
            if (e.getValue() == type) {
                return e.getKey();
            }
        }
        return type.name().toLowerCase(java.util.Locale.ROOT);
    }

    private final Set<BsonType> types;
    private final boolean allNumbers;

    private TypeSet(Set<BsonType> types, boolean allNumbers) {
        this.types = types;
        this.allNumbers = allNumbers;
    }

    /** MatcherTypeSet::parse: one code or alias, or an array of them (not empty). */
    static TypeSet parse(BsonValue spec) {
        Set<BsonType> types = EnumSet.noneOf(BsonType.class);
        boolean numbers = false;
        Iterable<BsonValue> items = spec.isArray() ? spec.asArray() : java.util.List.of(spec);
        for (BsonValue item : items) {
            if (item.isString() && item.asString().getValue().equals("number")) {
                numbers = true;
            } else {
                types.add(single(item));
            }
        }
        if (types.isEmpty() && !numbers) {
            throw new NotEvaluable("$type must match at least one type");
        }
        return new TypeSet(types, numbers);
    }

    private static BsonType single(BsonValue item) {
        if (item.isString()) {
            BsonType t = ALIASES.get(item.asString().getValue());
            if (t == null) {
                throw new NotEvaluable("$type: unknown type alias " + item.asString().getValue()
                        + " (the server refuses it)");
            }
            return t;
        }
        Integer code = BsonNumbers.isNumber(item) ? BsonNumbers.exactInt(item) : null;
        if (code == null || code == 0) {
            throw new NotEvaluable("$type: " + item + " is not a type code (the server refuses it)");
        }
        if (code == -1) {
            return BsonType.MIN_KEY;
        }
        boolean valid = code >= 1 && code <= 19 || code == 127;
        if (!valid) {
            throw new NotEvaluable("$type: " + code + " is not a type code (the server refuses it)");
        }
        return BsonType.findByValue(code);
    }

    @Override
    public boolean test(BsonValue value) {
        return value != null && (allNumbers && BsonNumbers.isNumber(value) || types.contains(value.getBsonType()));
    }
}
