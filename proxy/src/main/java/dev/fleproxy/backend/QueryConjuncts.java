package dev.fleproxy.backend;

import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The conditions a query ANDs on each field, as an index can read them: the query's top-level
 * fields and those of its {@code $and}'s documents (at any depth). A document matches the query
 * only if it meets every one, so the documents an index finds for any one of them hold all the
 * matches: the collection then filters them by the whole query. ({@code $or}, {@code $nor} and
 * the rest are not conditions of a field and are left to that filter.)
 */
final class QueryConjuncts {
    private static final int MAX_DEPTH = 32;

    private QueryConjuncts() {
    }

    /** Each field's conditions in the order the query gives them (a value, or an operator document). */
    static Map<String, List<Object>> of(Document query) {
        Map<String, List<Object>> out = new LinkedHashMap<>();
        add(query, out, 0);
        return out;
    }

    /** The branches of each {@code $or} the query ANDs (at its top level or in its {@code $and}s). */
    static List<List<Object>> disjunctions(Document query) {
        List<List<Object>> out = new ArrayList<>();
        addDisjunctions(query, out, 0);
        return out;
    }

    private static void addDisjunctions(Document query, List<List<Object>> out, int depth) {
        for (Map.Entry<String, Object> e : query.entrySet()) {
            if (e.getValue() instanceof List<?> all && depth < MAX_DEPTH) {
                if (e.getKey().equals("$or") && !all.isEmpty()) {
                    out.add(new ArrayList<>(all));
                } else if (e.getKey().equals("$and")) {
                    for (Object o : all) {
                        if (o instanceof Document d) {
                            addDisjunctions(d, out, depth + 1);
                        }
                    }
                }
            }
        }
    }

    private static void add(Document query, Map<String, List<Object>> out, int depth) {
        for (Map.Entry<String, Object> e : query.entrySet()) {
            if (e.getKey().equals("$and") && e.getValue() instanceof List<?> all && depth < MAX_DEPTH) {
                for (Object o : all) {
                    if (o instanceof Document d) {
                        add(d, out, depth + 1);
                    }
                }
            } else if (!e.getKey().startsWith("$")) {
                out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue());
            }
        }
    }
}
