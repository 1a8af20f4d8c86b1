package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * A filter document compiled into FilterNodes the way the server parses it (expression_parser.cpp,
 * parse): top-level and nested $and/$or/$nor, $comment, $alwaysTrue/$alwaysFalse; for each field,
 * a document of operators (OperatorParser), a regular expression, or a value to equal.
 */
final class FilterParser {
    /** The server's operators without a path; $elemMatch reads a first field among them as a filter. */
    static final Set<String> PATHLESS = Set.of("$and", "$or", "$nor", "$comment", "$where", "$text", "$expr",
            "$jsonSchema", "$alwaysTrue", "$alwaysFalse", "$sampleRate", "$ref", "$id", "$db");

    private FilterParser() {
    }

    /** One object of conditions, all of which must hold. */
    static FilterNode parseDocument(BsonDocument filter) {
        List<FilterNode> nodes = new ArrayList<>();
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            String name = e.getKey();
            BsonValue value = e.getValue();
            if (name.startsWith("$")) {
                FilterNode n = pathless(name, value);
                if (n != null) {
                    nodes.add(n);
                }
                continue;
            }
            String[] path = FieldPaths.split(name, "filter");
            if (isExpressionDocument(value, false)) {
                nodes.addAll(OperatorParser.parseOperators(path, value.asDocument()));
            } else if (value.isRegularExpression()) {
                nodes.add(new FilterNode.OnPath(path, RegexLeaf.of(value.asRegularExpression())));
            } else {
                nodes.add(new FilterNode.OnPath(path, OperatorParser.comparison(Comparison.Op.EQ, value, name)));
            }
        }
        return nodes.size() == 1 ? nodes.get(0) : new FilterNode.And(nodes);
    }

    private static FilterNode pathless(String name, BsonValue value) {
        switch (name) {
            case "$and":
                return new FilterNode.And(clauses(name, value));
            case "$or":
                return new FilterNode.Or(clauses(name, value));
            case "$nor":
                return new FilterNode.Nor(clauses(name, value));
            case "$comment":
                return null; // no effect on matching
            case "$alwaysTrue":
            case "$alwaysFalse":
                Long one = BsonNumbers.isNumber(value) ? BsonNumbers.exactLong(value) : null;
                if (one == null || one != 1) {
                    throw new NotEvaluable(name + " must be an integer value of 1 (the server refuses " + value + ")");
                }
                return new FilterNode.Constant(name.equals("$alwaysTrue"));
            case "$where":
                throw new NotEvaluable("$where cannot be evaluated by the proxy: it runs JavaScript");
            case "$expr":
                return new ExprFilter(Expression.compile(value));
            case "$text":
                throw new NotEvaluable("$text cannot be evaluated by the proxy: it needs the server's text index");
            case "$jsonSchema":
                throw new NotEvaluable("$jsonSchema cannot be evaluated by the proxy");
            case "$sampleRate":
                throw new NotEvaluable("$sampleRate cannot be evaluated by the proxy: it is random");
            default:
                throw new NotEvaluable(name + " cannot be evaluated by the proxy: not a supported top-level "
                        + "operator");
        }
    }

    /** $and/$or/$nor: a non-empty array of filter documents. */
    private static List<FilterNode> clauses(String name, BsonValue value) {
        if (!value.isArray() || value.asArray().isEmpty()) {
            throw new NotEvaluable(name + " must be a nonempty array (the server refuses " + value + ")");
        }
        List<FilterNode> children = new ArrayList<>();
        for (BsonValue clause : value.asArray()) {
            if (!clause.isDocument()) {
                throw new NotEvaluable(name + " entries need to be full objects (the server refuses " + clause + ")");
            }
            children.add(parseDocument(clause.asDocument()));
        }
        return children;
    }

    /**
     * isExpressionDocument: a non-empty document whose first field starts with '$' and that is not
     * a DBRef ({$ref, $id}; with allowIncompleteDBRef, any of $ref, $id, $db), which is a value.
     */
    static boolean isExpressionDocument(BsonValue value, boolean allowIncompleteDBRef) {
        if (value.getBsonType() != BsonType.DOCUMENT || value.asDocument().isEmpty()) {
            return false;
        }
        BsonDocument doc = value.asDocument();
        if (!doc.getFirstKey().startsWith("$")) {
            return false;
        }
        boolean ref = doc.containsKey("$ref");
        boolean id = doc.containsKey("$id");
        boolean dbRef = allowIncompleteDBRef ? ref || id || doc.containsKey("$db") : ref && id;
        return !dbRef;
    }
}
