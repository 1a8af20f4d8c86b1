package dev.fleproxy.backend;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * mongo-java-server's in-memory collection, which reads a query sorted by a unique key with a
 * limit in that key's order ({@link ConjunctUniqueIndex#inOrder}) from the query's bound on it
 * and stops once skip + limit documents match, as mongod's index scan does; 1.47.0 matched every
 * document and sorted them all for each such query. A query with an {@code $or} whose every
 * branch an index answers reads the union of what they find ({@link #unionOfBranches}). Every
 * other query is read as before.
 */
final class IndexedMemoryCollection extends MemoryCollection {
    IndexedMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                            CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        List<Integer> first = inKeyOrder(query, orderBy, numberToSkip, limit);
        if (first != null) {
            return matchDocuments(query, first, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }
        List<List<Object>> disjunctions = QueryConjuncts.disjunctions(query);
        List<Integer> union = disjunctions.isEmpty() || getIndexes().stream().anyMatch(i -> i.canHandle(query)) ? null
                : unionOfBranches(disjunctions);
        if (union != null) {
            return matchDocuments(query, union, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /**
     * For a query no index answers whole, given the {@code $or}s it ANDs: the documents an index
     * finds for each branch of one of them, if an index answers every branch (the proxy's substring
     * condition, docs/query-model.md#text-indexes), united in the collection's order, as mongod's
     * OR plan reads them; null if no {@code $or} is answered so. The collection filters them by the
     * whole query.
     */
    private List<Integer> unionOfBranches(List<List<Object>> disjunctions) {
        for (List<Object> branches : disjunctions) {
            java.util.TreeSet<Integer> union = new java.util.TreeSet<>();
            boolean answered = true;
            for (Object branch : branches) {
                Index<Integer> index = branch instanceof Document d
                        ? getIndexes().stream().filter(i -> i.canHandle(d)).findFirst().orElse(null) : null;
                if (index == null) {
                    answered = false;
                    break;
                }
                index.getPositions((Document) branch).forEach(union::add);
            }
            if (answered) {
                return new ArrayList<>(union);
            }
        }
        return null;
    }

    /**
     * The first skip + limit matches in the order of the unique key the query sorts by alone, if
     * it sorts so with a limit and no index answers the query itself (one that does finds its few
     * candidates at once); else null.
     */
    private List<Integer> inKeyOrder(Document query, Document orderBy, int numberToSkip, int limit) {
        if (limit <= 0 || orderBy == null || orderBy.size() != 1 || numberToSkip < 0
                || (long) numberToSkip + limit > Integer.MAX_VALUE) {
            return null;
        }
        String key = orderBy.keySet().iterator().next();
        Object direction = orderBy.get(key);
        if (!(direction instanceof Number n) || Math.abs(n.doubleValue()) != 1) {
            return null;
        }
        boolean descending = n.doubleValue() < 0;
        ConjunctUniqueIndex index = null;
        for (Index<Integer> i : getIndexes()) {
            if (i.canHandle(query)) {
                return null;
            }
            if (i instanceof ConjunctUniqueIndex u && key.equals(u.orderedKey())) {
                index = u;
            }
        }
        if (index == null) {
            return null;
        }
        Object bound = null;
        boolean inclusive = true;
        for (Object condition : QueryConjuncts.of(query).getOrDefault(key, List.of())) {
            if (condition instanceof Document d) {
                for (Map.Entry<String, Object> op : d.entrySet()) {
                    String name = op.getKey();
                    if (descending ? name.equals("$lt") || name.equals("$lte") : name.equals("$gt") || name.equals("$gte")) {
                        bound = op.getValue();
                        inclusive = name.endsWith("e");
                        break;
                    }
                }
            }
            if (bound != null) {
                break; // any one bound the query ANDs holds every match past it
            }
        }
        if (bound instanceof Document || bound instanceof List<?>) {
            bound = null; // a document or array as the bound: read from the first, the filter decides
        }
        return index.inOrder(bound, inclusive, descending,
                p -> documentMatchesQuery(getDocument(p), query), numberToSkip + limit);
    }
}
