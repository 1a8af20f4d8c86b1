package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * The operators of one field, {a: {$gt: 1, $lt: 5}}, each a node on the field's path, as the
 * server parses them (expression_parser.cpp, parseSub and parseSubField). An empty path stands for
 * the element itself, inside $elemMatch's value form.
 */
final class OperatorParser {
    private static final Set<String> GEO = Set.of("$geoWithin", "$within", "$geoIntersects", "$near",
            "$nearSphere", "$geoNear");
    private static final Set<String> BITS = Set.of("$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear");
    private static final Set<String> DBREF_FIELDS = Set.of("$ref", "$id", "$db");

    private OperatorParser() {
    }

    /** Every operator of an operator document (whose first field starts with '$'). */
    static List<FilterNode> parseOperators(String[] path, BsonDocument operators) {
        List<FilterNode> nodes = new ArrayList<>();
        for (Map.Entry<String, BsonValue> e : operators.entrySet()) {
            FilterNode n = operator(path, operators, e.getKey(), e.getValue());
            if (n != null) {
                nodes.add(n);
            }
        }
        return nodes;
    }

    private static FilterNode operator(String[] path, BsonDocument context, String name, BsonValue value) {
        switch (name) {
            case "$eq":
                return on(path, comparison(Comparison.Op.EQ, value, name));
            case "$ne":
                return new FilterNode.Not(on(path, comparison(Comparison.Op.EQ, noRegex(name, value), name)));
            case "$lt":
                return on(path, comparison(Comparison.Op.LT, noRegex(name, value), name));
            case "$lte":
                return on(path, comparison(Comparison.Op.LTE, noRegex(name, value), name));
            case "$gt":
                return on(path, comparison(Comparison.Op.GT, noRegex(name, value), name));
            case "$gte":
                return on(path, comparison(Comparison.Op.GTE, noRegex(name, value), name));
            case "$in":
                return on(path, in(name, value));
            case "$nin":
                return new FilterNode.Not(on(path, in(name, value)));
            case "$exists":
                FilterNode exists = on(path, v -> v != null);
                return BsonNumbers.trueValue(value) ? exists : new FilterNode.Not(exists);
            case "$type":
                return on(path, TypeSet.parse(value));
            case "$mod":
                return on(path, Modulo.parse(value));
            case "$size":
                Integer size = BsonNumbers.isNumber(value) ? BsonNumbers.exactInt(value) : null;
                if (size == null || size < 0) {
                    throw new NotEvaluable("$size needs a non-negative integer (the server refuses " + value + ")");
                }
                return on(path, new ArrayLeaves.Size(size));
            case "$regex":
                return on(path, regex(context));
            case "$options":
                if (!context.containsKey("$regex")) {
                    throw new NotEvaluable("$options needs a $regex (the server refuses it alone)");
                }
                return null; // read with its $regex
            case "$not":
                return not(path, value);
            case "$elemMatch":
                return on(path, elemMatch(value));
            case "$all":
                return all(path, value);
            default:
                throw refused(name);
        }
    }

    private static NotEvaluable refused(String name) {
        if (GEO.contains(name)) {
            return new NotEvaluable(name + " cannot be evaluated by the proxy: geospatial queries are not reproduced");
        }
        if (BITS.contains(name)) {
            return new NotEvaluable(name + " cannot be evaluated by the proxy: bit tests are not supported");
        }
        if (name.equals("$where") || name.equals("$expr") || name.equals("$text")) {
            return new NotEvaluable(name + " cannot be evaluated by the proxy (and cannot apply to a field)");
        }
        return new NotEvaluable(name + " cannot be evaluated by the proxy: unknown or unsupported operator");
    }

    private static FilterNode on(String[] path, Leaf leaf) {
        return new FilterNode.OnPath(path, leaf);
    }

    /** A comparison's operand: anything but undefined, which the server refuses. */
    static Comparison comparison(Comparison.Op op, BsonValue operand, String name) {
        if (operand.getBsonType() == BsonType.UNDEFINED) {
            throw new NotEvaluable(name + ": cannot compare to undefined (the server refuses it)");
        }
        return new Comparison(op, operand);
    }

    private static BsonValue noRegex(String name, BsonValue value) {
        if (value.isRegularExpression()) {
            throw new NotEvaluable(name + " cannot take a regular expression (the server refuses it)");
        }
        return value;
    }

    /** $in/$nin: an array of values and regular expressions; no operator documents, no undefined. */
    private static InList in(String name, BsonValue value) {
        if (!value.isArray()) {
            throw new NotEvaluable(name + " needs an array (the server refuses " + value + ")");
        }
        List<BsonValue> values = new ArrayList<>();
        List<RegexLeaf> regexes = new ArrayList<>();
        for (BsonValue v : value.asArray()) {
            if (FilterParser.isExpressionDocument(v, false)) {
                throw new NotEvaluable(name + ": cannot nest $ under " + name + " (the server refuses it)");
            }
            if (v.isRegularExpression()) {
                regexes.add(RegexLeaf.of(v.asRegularExpression()));
            } else if (v.getBsonType() == BsonType.UNDEFINED) {
                throw new NotEvaluable(name + " cannot hold undefined (the server refuses it)");
            } else {
                values.add(v);
            }
        }
        return new InList(values, regexes);
    }

    /** $regex (a string, or a regular expression whose options may not clash with $options), $options. */
    private static RegexLeaf regex(BsonDocument context) {
        String pattern = null;
        String options = "";
        for (Map.Entry<String, BsonValue> e : context.entrySet()) {
            BsonValue v = e.getValue();
            if (e.getKey().equals("$regex")) {
                if (v.isString()) {
                    pattern = v.asString().getValue();
                } else if (v.isRegularExpression()) {
                    pattern = v.asRegularExpression().getPattern();
                    options = merged(options, v.asRegularExpression().getOptions());
                } else {
                    throw new NotEvaluable("$regex has to be a string (the server refuses " + v + ")");
                }
            } else if (e.getKey().equals("$options")) {
                if (!v.isString()) {
                    throw new NotEvaluable("$options has to be a string (the server refuses " + v + ")");
                }
                options = merged(options, v.asString().getValue());
            }
        }
        return RegexLeaf.of(pattern, options);
    }

    private static String merged(String before, String more) {
        if (more.isEmpty()) {
            return before;
        }
        if (!before.isEmpty()) {
            throw new NotEvaluable("$regex: options set in both $regex and $options (the server refuses it)");
        }
        return more;
    }

    /** $not: a regular expression, or a non-empty document of operators, negated as a whole. */
    private static FilterNode not(String[] path, BsonValue value) {
        if (value.isRegularExpression()) {
            return new FilterNode.Not(on(path, RegexLeaf.of(value.asRegularExpression())));
        }
        if (!value.isDocument() || value.asDocument().isEmpty()) {
            throw new NotEvaluable("$not needs a regex or a non-empty document (the server refuses " + value + ")");
        }
        return new FilterNode.Not(new FilterNode.And(parseOperators(path, value.asDocument())));
    }

    /**
     * $elemMatch: the value form when its document starts with an operator that takes a path
     * ({$gt: 1}), else a filter on each element (the document form, {b: 1} or {$or: [...]}).
     */
    static ArrayLeaves.ElemMatch elemMatch(BsonValue value) {
        if (!value.isDocument()) {
            throw new NotEvaluable("$elemMatch needs an object (the server refuses " + value + ")");
        }
        BsonDocument doc = value.asDocument();
        boolean valueForm = FilterParser.isExpressionDocument(value, true)
                && !FilterParser.PATHLESS.contains(doc.getFirstKey());
        if (valueForm) {
            return new ArrayLeaves.ElemMatchValue(parseOperators(new String[0], doc));
        }
        return new ArrayLeaves.ElemMatchObject(FilterParser.parseDocument(doc));
    }

    /** $all: every value present (each an equality, a regex), or every $elemMatch holding; [] matches nothing. */
    private static FilterNode all(String[] path, BsonValue value) {
        if (!value.isArray()) {
            throw new NotEvaluable("$all needs an array (the server refuses " + value + ")");
        }
        List<FilterNode> nodes = new ArrayList<>();
        boolean elemMatches = !value.asArray().isEmpty() && startsWith(value.asArray().get(0), "$elemMatch");
        for (BsonValue v : value.asArray()) {
            if (elemMatches) {
                if (!startsWith(v, "$elemMatch") || v.asDocument().size() != 1) {
                    throw new NotEvaluable("$all: $elemMatch items and others cannot be mixed (the server "
                            + "refuses it)");
                }
                nodes.add(on(path, elemMatch(v.asDocument().get("$elemMatch"))));
            } else if (v.isRegularExpression()) {
                nodes.add(on(path, RegexLeaf.of(v.asRegularExpression())));
            } else if (v.isDocument() && !v.asDocument().isEmpty() && v.asDocument().getFirstKey().startsWith("$")
                    && !DBREF_FIELDS.contains(v.asDocument().getFirstKey())) {
                throw new NotEvaluable("$all: no $ expressions in $all");
            } else {
                nodes.add(on(path, comparison(Comparison.Op.EQ, v, "$all")));
            }
        }
        return nodes.isEmpty() ? new FilterNode.Constant(false) : new FilterNode.And(nodes);
    }

    private static boolean startsWith(BsonValue v, String firstField) {
        return v.isDocument() && !v.asDocument().isEmpty() && v.asDocument().getFirstKey().equals(firstField);
    }
}
