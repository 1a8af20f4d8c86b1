package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The aggregation stages the proxy runs on decrypted documents: $match, $sort, $skip, $limit,
 * $project and $addFields/$set of expressions ({@link Expression}), $unset, $count, $group
 * with $sum, $avg, $min, $max, $first, $last, $push, $addToSet and $count ({@link Accumulator}),
 * and $sortByCount. Any other stage, or an expression operator outside the expr package, is refused when
 * compiled ({@link NotEvaluable}). $group's output order is not defined (as on the server).
 */
public final class PipelineEvaluator {
    private final List<UnaryOperator<List<BsonDocument>>> stages;

    private PipelineEvaluator(List<UnaryOperator<List<BsonDocument>>> stages) {
        this.stages = stages;
    }

    public static PipelineEvaluator compile(List<BsonValue> pipeline) {
        List<UnaryOperator<List<BsonDocument>>> stages = new ArrayList<>();
        for (BsonValue v : pipeline) {
            if (!v.isDocument() || v.asDocument().size() != 1) {
                throw new NotEvaluable("a pipeline stage that is not {name: specification}");
            }
            String name = v.asDocument().getFirstKey();
            stages.add(stage(name, v.asDocument().get(name)));
        }
        return new PipelineEvaluator(stages);
    }

    public List<BsonDocument> run(List<BsonDocument> documents) {
        List<BsonDocument> out = documents;
        for (UnaryOperator<List<BsonDocument>> s : stages) {
            out = s.apply(out);
        }
        return out;
    }

    private static UnaryOperator<List<BsonDocument>> stage(String name, BsonValue spec) {
        return switch (name) {
            case "$match" -> {
                DocumentFilter f = DocumentFilter.compile(document(name, spec));
                yield docs -> docs.stream().filter(f::matches).toList();
            }
            case "$sort" -> {
                DocumentSort s = DocumentSort.compile(document(name, spec));
                yield s::sort;
            }
            case "$skip", "$limit" -> {
                long n = whole(name, spec);
                if (name.equals("$limit") && n == 0) {
                    throw new NotEvaluable("$limit 0 (the server refuses it)");
                }
                yield docs -> name.equals("$skip") ? CandidateWindow.apply(docs, n, 0) : CandidateWindow.apply(docs, 0, n);
            }
            case "$project" -> project(document(name, spec));
            case "$addFields", "$set" -> addFields(document(name, spec));
            case "$unset" -> unset(spec);
            case "$count" -> {
                if (!spec.isString() || spec.asString().getValue().isEmpty() || spec.asString().getValue().startsWith("$")) {
                    throw new NotEvaluable("$count takes a field name");
                }
                String field = spec.asString().getValue();
                yield docs -> docs.isEmpty() ? List.of() : List.of(new BsonDocument(field, new BsonInt32(docs.size())));
            }
            case "$group" -> group(document(name, spec));
            case "$sortByCount" -> {
                UnaryOperator<List<BsonDocument>> g = group(new BsonDocument("_id", spec)
                        .append("count", new BsonDocument("$sum", new BsonInt32(1))));
                DocumentSort byCount = DocumentSort.compile(new BsonDocument("count", new BsonInt32(-1)));
                yield docs -> byCount.sort(g.apply(docs));
            }
            default -> throw new NotEvaluable("the stage " + name + " after one that needs the plaintext of encrypted fields");
        };
    }

    private static UnaryOperator<List<BsonDocument>> project(BsonDocument spec) {
        boolean plain = spec.values().stream().allMatch(v -> v.isBoolean() || v.isNumber());
        if (plain) {
            DocumentProjection p = DocumentProjection.compile(spec);
            return docs -> docs.stream().map(p::apply).toList();
        }
        boolean withId = !(spec.containsKey("_id") && isFalse(spec.get("_id")));
        Map<String, Expression> computed = new LinkedHashMap<>();
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            if (e.getKey().contains(".") || e.getKey().startsWith("$")) {
                throw new NotEvaluable("$project of '" + e.getKey() + "' with expressions");
            }
            BsonValue v = e.getValue();
            if (v.isBoolean() || v.isNumber()) {
                if (isFalse(v) && !e.getKey().equals("_id")) {
                    throw new NotEvaluable("$project mixing exclusion and expressions");
                }
                if (!isFalse(v)) {
                    computed.put(e.getKey(), Expression.compile(new BsonString("$" + e.getKey())));
                }
            } else {
                computed.put(e.getKey(), Expression.compile(v));
            }
        }
        return docs -> docs.stream().map(d -> {
            BsonDocument out = new BsonDocument();
            if (withId && d.containsKey("_id") && !computed.containsKey("_id")) {
                out.put("_id", d.get("_id"));
            }
            computed.forEach((field, x) -> {
                BsonValue v = x.evaluate(d);
                if (v != null) {
                    out.put(field, v);
                }
            });
            return out;
        }).toList();
    }

    private static UnaryOperator<List<BsonDocument>> addFields(BsonDocument spec) {
        Map<String, Expression> fields = new LinkedHashMap<>();
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            if (e.getKey().contains(".") || e.getKey().startsWith("$")) {
                throw new NotEvaluable("$addFields of '" + e.getKey() + "'");
            }
            fields.put(e.getKey(), Expression.compile(e.getValue()));
        }
        return docs -> docs.stream().map(d -> {
            BsonDocument out = d.clone();
            fields.forEach((field, x) -> {
                BsonValue v = x.evaluate(d);
                if (v == null) {
                    out.remove(field);
                } else {
                    out.put(field, v);
                }
            });
            return out;
        }).toList();
    }

    private static UnaryOperator<List<BsonDocument>> unset(BsonValue spec) {
        BsonDocument exclusion = new BsonDocument();
        List<BsonValue> names = spec.isArray() ? spec.asArray() : List.of(spec);
        for (BsonValue n : names) {
            if (!n.isString()) {
                throw new NotEvaluable("$unset of something other than field names");
            }
            exclusion.put(n.asString().getValue(), new BsonInt32(0));
        }
        DocumentProjection p = DocumentProjection.compile(exclusion);
        return docs -> docs.stream().map(p::apply).toList();
    }

    private static UnaryOperator<List<BsonDocument>> group(BsonDocument spec) {
        if (!spec.containsKey("_id")) {
            throw new NotEvaluable("$group without _id");
        }
        Expression id = Expression.compile(spec.get("_id"));
        Map<String, Accumulator> accumulators = new LinkedHashMap<>();
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            if (!e.getKey().equals("_id")) {
                if (e.getKey().contains(".") || e.getKey().startsWith("$")) {
                    throw new NotEvaluable("a $group output named '" + e.getKey() + "'");
                }
                accumulators.put(e.getKey(), Accumulator.compile(e.getValue()));
            }
        }
        return docs -> {
            // groups by BSON equality (1 and 1.0 are one group), the key as first seen
            TreeMap<BsonValue, Map<String, Accumulator>> groups = new TreeMap<>(BsonOrder.COMPARATOR);
            Map<BsonValue, BsonValue> firstKey = new TreeMap<>(BsonOrder.COMPARATOR);
            for (BsonDocument d : docs) {
                BsonValue key = id.evaluate(d);
                BsonValue k = key == null ? BsonNull.VALUE : key;
                Map<String, Accumulator> g = groups.computeIfAbsent(k, x -> {
                    firstKey.put(x, x);
                    Map<String, Accumulator> fresh = new LinkedHashMap<>();
                    accumulators.forEach((name, a) -> fresh.put(name, a.fresh()));
                    return fresh;
                });
                g.values().forEach(a -> a.add(d));
            }
            List<BsonDocument> out = new ArrayList<>();
            groups.forEach((k, g) -> out.add(Accumulator.results(g, firstKey.get(k))));
            return out;
        };
    }

    private static BsonDocument document(String stage, BsonValue spec) {
        if (!spec.isDocument()) {
            throw new NotEvaluable(stage + " takes a document");
        }
        return spec.asDocument();
    }

    private static long whole(String stage, BsonValue spec) {
        if (!spec.isNumber() || spec.asNumber().doubleValue() != Math.rint(spec.asNumber().doubleValue())
                || spec.asNumber().longValue() < 0) {
            throw new NotEvaluable(stage + " takes a non-negative whole number");
        }
        return spec.asNumber().longValue();
    }

    private static boolean isFalse(BsonValue v) {
        return v.isBoolean() ? !v.asBoolean().getValue() : v.isNumber() && v.asNumber().doubleValue() == 0;
    }
}
