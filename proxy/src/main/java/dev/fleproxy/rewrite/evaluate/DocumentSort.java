package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A find sort ({a: 1, "b.c": -1}) evaluated on plaintext documents with MongoDB's semantics.
 *
 * <p>Supports: fields sorted ascending (1) or descending (-1), written as any numeric type; dotted
 * paths through documents and arrays. Values compare in BSON order (BsonOrder); a missing field
 * sorts as null; an array sorts by its least element ascending and its greatest descending; an
 * empty array sorts before null (SortKeys). Ties keep the input order (the sort is stable).
 *
 * <p>Refuses with NotEvaluable when compiling: {$meta: ...} and any value other than 1 or -1,
 * empty paths or fields starting with '$', and numeric path segments (the server's key generator
 * reads those positionally, with rules of their own). When comparing: a document whose sort fields
 * go through two different arrays, on which the server fails the query.
 */
public final class DocumentSort {
    private final SortKeys keys;
    private final Comparator<BsonValue[]> order;
    private final Set<String> fieldsRead;

    private DocumentSort(SortKeys keys, Comparator<BsonValue[]> order, Set<String> fieldsRead) {
        this.keys = keys;
        this.order = order;
        this.fieldsRead = fieldsRead;
    }

    /** The top-level fields the sort keys are read from: a document holding only those sorts as the whole one. */
    public Set<String> fieldsRead() {
        return fieldsRead;
    }

    /** The sort spec compiled, or NotEvaluable naming what cannot be evaluated and why. */
    public static DocumentSort compile(BsonDocument sortSpec) {
        List<String[]> paths = new ArrayList<>();
        List<Boolean> descending = new ArrayList<>();
        for (Map.Entry<String, BsonValue> e : sortSpec.entrySet()) {
            paths.add(path(e.getKey()));
            descending.add(direction(e.getKey(), e.getValue()));
        }
        Comparator<BsonValue[]> order = (a, b) -> 0;
        for (int i = 0; i < paths.size(); i++) {
            int field = i;
            Comparator<BsonValue[]> byField = (a, b) -> BsonOrder.compare(a[field], b[field]);
            order = order.thenComparing(descending.get(i) ? byField.reversed() : byField);
        }
        Set<String> fields = new HashSet<>();
        paths.forEach(p -> fields.add(p[0]));
        return new DocumentSort(new SortKeys(paths.toArray(new String[0][]), order), order, Set.copyOf(fields));
    }

    private static String[] path(String name) {
        String[] path = FieldPaths.split(name, "sort");
        for (String segment : path) {
            if (segment.startsWith("$")) {
                throw new NotEvaluable("sort: the field " + name + " starts with '$' (the server refuses it)");
            }
            if (PathValues.allDigits(segment)) {
                throw new NotEvaluable("sort: the numeric segment in " + name + " cannot be evaluated by the proxy "
                        + "(the server reads it positionally)");
            }
        }
        return path;
    }

    /** 1 ascending, -1 descending, as any number whose value is exactly that (the server's check). */
    private static boolean direction(String name, BsonValue value) {
        if (value.isDocument()) {
            throw new NotEvaluable("sort: " + name + ": " + value + " cannot be evaluated by the proxy ($meta and "
                    + "expressions are not supported)");
        }
        double d = BsonNumbers.isNumber(value) ? value.asNumber().doubleValue() : Double.NaN;
        if (d != 1 && d != -1) {
            throw new NotEvaluable("sort: " + name + ": the key ordering must be 1 or -1 (the server refuses "
                    + value + ")");
        }
        return d == -1;
    }

    /**
     * Documents in sort order, ties in the order given. May throw NotEvaluable on a document whose
     * sort fields go through parallel arrays.
     */
    public Comparator<BsonDocument> comparator() {
        return (a, b) -> order.compare(keys.of(a), keys.of(b));
    }

    /**
     * Whether a document sorts after {@code d} or ties with it (so, in a stable sort, comes after it
     * if read later); d's key computed once.
     */
    public java.util.function.Predicate<BsonDocument> notBefore(BsonDocument d) {
        BsonValue[] key = keys.of(d);
        return x -> order.compare(keys.of(x), key) >= 0;
    }

    /** The documents sorted, each sort key computed once; ties keep their order. */
    public List<BsonDocument> sort(Collection<BsonDocument> docs) {
        List<Map.Entry<BsonValue[], BsonDocument>> keyed = new ArrayList<>();
        for (BsonDocument d : docs) {
            keyed.add(Map.entry(keys.of(d), d));
        }
        keyed.sort((x, y) -> order.compare(x.getKey(), y.getKey()));
        List<BsonDocument> out = new ArrayList<>(keyed.size());
        keyed.forEach(e -> out.add(e.getValue()));
        return out;
    }
}
