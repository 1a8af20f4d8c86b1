package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The aggregation expressions the proxy evaluates: a field path ("$a.b", through arrays as the
 * server walks it: an array in the middle gives the values of its documents, an array), a literal
 * ({$literal: v}, or a number, boolean, null or string not starting with '$'), and a document of
 * such expressions. Operators ($add, $cond, …) and variables ($$ROOT, …) are refused when compiled.
 */
abstract class Expression {
    /** The value, or null when it is missing (a path to nothing). */
    abstract BsonValue evaluate(BsonDocument doc);

    static Expression compile(BsonValue v) {
        if (v.isString() && v.asString().getValue().startsWith("$")) {
            String path = v.asString().getValue().substring(1);
            if (path.startsWith("$")) {
                throw new NotEvaluable("the variable " + v.asString().getValue() + " in an expression");
            }
            return new FieldPath(FieldPaths.split(path, "an expression"));
        }
        if (v.isDocument()) {
            BsonDocument d = v.asDocument();
            if (d.size() == 1 && d.getFirstKey().equals("$literal")) {
                return new Literal(d.get("$literal"));
            }
            Map<String, Expression> fields = new java.util.LinkedHashMap<>();
            for (Map.Entry<String, BsonValue> e : d.entrySet()) {
                if (e.getKey().startsWith("$")) {
                    throw new NotEvaluable("the expression operator " + e.getKey());
                }
                if (e.getKey().contains(".")) {
                    throw new NotEvaluable("a dotted field name in an expression document ('" + e.getKey() + "')");
                }
                fields.put(e.getKey(), compile(e.getValue()));
            }
            return new Composite(fields);
        }
        if (v.isArray()) {
            List<Expression> items = new ArrayList<>();
            v.asArray().forEach(item -> items.add(compile(item)));
            return new ArrayOf(items);
        }
        return new Literal(v);
    }

    private static final class Literal extends Expression {
        private final BsonValue value;

        Literal(BsonValue value) {
            this.value = value;
        }

        @Override
        BsonValue evaluate(BsonDocument doc) {
            return value;
        }
    }

    private static final class FieldPath extends Expression {
        private final String[] path;

        FieldPath(String[] path) {
            this.path = path;
        }

        @Override
        BsonValue evaluate(BsonDocument doc) {
            return walk(doc, 0);
        }

        private BsonValue walk(BsonValue at, int i) {
            if (i == path.length) {
                return at;
            }
            if (at.isDocument()) {
                BsonValue next = at.asDocument().get(path[i]);
                return next == null ? null : walk(next, i + 1);
            }
            if (at.isArray()) {
                BsonArray out = new BsonArray();
                for (BsonValue element : at.asArray()) {
                    if (element.isDocument() || element.isArray()) {
                        BsonValue v = walk(element, i);
                        if (v != null) {
                            out.add(v);
                        }
                    }
                }
                return out;
            }
            return null;
        }
    }

    private static final class Composite extends Expression {
        private final Map<String, Expression> fields;

        Composite(Map<String, Expression> fields) {
            this.fields = fields;
        }

        @Override
        BsonValue evaluate(BsonDocument doc) {
            BsonDocument out = new BsonDocument();
            fields.forEach((name, e) -> {
                BsonValue v = e.evaluate(doc);
                if (v != null) {
                    out.put(name, v);
                }
            });
            return out;
        }
    }

    private static final class ArrayOf extends Expression {
        private final List<Expression> items;

        ArrayOf(List<Expression> items) {
            this.items = items;
        }

        @Override
        BsonValue evaluate(BsonDocument doc) {
            BsonArray out = new BsonArray();
            for (Expression e : items) {
                BsonValue v = e.evaluate(doc);
                out.add(v == null ? org.bson.BsonNull.VALUE : v);
            }
            return out;
        }
    }
}
