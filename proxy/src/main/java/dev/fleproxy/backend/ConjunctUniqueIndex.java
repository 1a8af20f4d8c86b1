package dev.fleproxy.backend;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * mongo-java-server's unique index (the _id index among them), used also when the query names
 * more than its keys: mongo-java-server 1.47.0 uses an index only for a query whose fields are
 * exactly the index's, so {@code {_id: X, f: Y}}, and the proxy's compare-and-swap filter
 * {@code {$and: [{_id: X}, …]}}, read the whole collection. Here a condition on the keys that the
 * index handles, among the query's conjuncts ({@link QueryConjuncts}), picks the candidates, and
 * the collection filters them by the whole query as it does for any index.
 *
 * <p>The _id index also keeps its values in order (the backend's own sort order), so that a
 * query sorted by _id with a limit reads from its bound and stops at the limit ({@link
 * IndexedMemoryCollection}): YCSB workload E's scans, {@code {_id: {$gte: k}}} sorted by _id with
 * a limit, read the whole collection and sorted it for each scan.
 */
final class ConjunctUniqueIndex extends MemoryUniqueIndex {
    /** The _id values (normalized, as the index holds them) in order, for the _id index; else null. */
    private final NavigableMap<Object, Integer> ordered;

    /** The key names, kept: 1.47.0 makes them anew from the index keys at each call, for every query. */
    private final List<String> keyNames;
    private final Set<String> keyNameSet;
    /** The last query canHandle was asked about, and its part the index handles, until getPositions reads it. */
    private Document lastQuery;
    private Document lastPart;

    ConjunctUniqueIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.keyNames = keys.stream().map(IndexKey::getKey).toList();
        this.keyNameSet = java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(keyNames));
        // the _id index only: its values are never arrays (one entry a document) and its key is not a path
        this.ordered = keys.size() == 1 && keys.get(0).getKey().equals("_id") ? new TreeMap<>(ValueComparator.asc()) : null;
    }

    @Override
    protected List<String> keys() {
        return keyNames == null ? super.keys() : keyNames; // null while the superclass is being built
    }

    @Override
    protected Set<String> keySet() {
        return keyNameSet == null ? super.keySet() : keyNameSet;
    }

    /** The single key, if this index keeps its values in order; null otherwise. */
    String orderedKey() {
        return ordered == null ? null : keys().get(0);
    }

    @Override
    protected boolean putKeyPosition(KeyValue keyValue, Integer position) {
        boolean added = super.putKeyPosition(keyValue, position);
        if (added && ordered != null) {
            ordered.put(keyValue.get(0), position);
        }
        return added;
    }

    @Override
    protected Integer removeDocument(KeyValue keyValue) {
        Integer removed = super.removeDocument(keyValue);
        if (removed != null && ordered != null) {
            ordered.remove(keyValue.get(0));
        }
        return removed;
    }

    /**
     * Up to {@code count} positions in the key's order (descending if asked) from {@code bound}
     * (null: from the first), those {@code wanted} accepts.
     */
    synchronized List<Integer> inOrder(Object bound, boolean inclusive, boolean descending, IntPredicate wanted,
                                       int count) {
        NavigableMap<Object, Integer> view = ordered;
        if (bound != null) {
            Object from = getKeyValues(new Document(keys().get(0), bound)).iterator().next().get(0);
            view = descending ? ordered.headMap(from, inclusive) : ordered.tailMap(from, inclusive);
        }
        List<Integer> out = new ArrayList<>();
        for (Integer p : descending ? view.descendingMap().values() : view.values()) {
            if (wanted.test(p)) {
                out.add(p);
                if (out.size() >= count) {
                    break;
                }
            }
        }
        return out;
    }

    @Override
    public synchronized boolean canHandle(Document query) {
        return super.canHandle(query) || part(query) != null;
    }

    @Override
    public synchronized Iterable<Integer> getPositions(Document query) {
        if (super.canHandle(query)) {
            return super.getPositions(query);
        }
        Document p = part(query);
        lastQuery = null; // kept from canHandle to here only: a query document changed later is read afresh
        lastPart = null;
        return super.getPositions(p);
    }

    /** A query of the index's keys alone, from conditions the query ANDs, that the index handles; null if none. */
    private Document part(Document query) {
        if (query != lastQuery) {
            lastPart = partOf(query);
            lastQuery = query;
        }
        return lastPart;
    }

    private Document partOf(Document query) {
        Map<String, List<Object>> conjuncts = QueryConjuncts.of(query);
        Document part = new Document();
        for (String key : keys()) {
            List<Object> conditions = conjuncts.get(key);
            if (conditions == null) {
                return null;
            }
            Object chosen = null;
            boolean found = false;
            for (Object c : conditions) {
                if (keys().size() > 1 || super.canHandle(new Document(key, c))) {
                    chosen = c;
                    found = true;
                    break;
                }
            }
            if (!found) {
                return null;
            }
            part.put(key, chosen);
        }
        return super.canHandle(part) ? part : null;
    }
}
