package dev.fleproxy.backend;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.BinData;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.LegacyUUID;
import de.bwaldvogel.mongo.bson.ObjectId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * A non-unique index for the in-memory backend, which mongo-java-server 1.47.0 does not build
 * ("adding secondary index … is not yet implemented. ignoring"): each key value (each element of
 * an array: multikey, as mongod's) maps to the positions of the documents holding it. It answers
 * equality, {@code $eq} and {@code $in} of plain values (numbers, strings, booleans, binary,
 * ObjectId, dates, UUIDs) on every key, among the conditions the query ANDs ({@link
 * QueryConjuncts}); the collection filters what it finds by the whole query, so an index
 * finds a superset of the matches, in the collection's own order. On a one-key index, null among
 * them (the proxy's range tags ask for it, docs/query-model.md#range-indexes) finds every
 * document that might hold null there ({@link #nullish}); a {@code $all} of plain values, the
 * documents holding each. Anything else (ranges, documents, arrays, regular expressions) reads
 * the collection as before.
 *
 * <p>Synchronized: the collection calls it under its own lock, the commands that list indexes
 * without it.
 */
final class MemorySecondaryIndex extends Index<Integer> {
    /** Key combinations one query may look up ($in on several keys multiply): past this, a scan. */
    static final int MAX_LOOKUPS = 10_000;

    private final Map<KeyValue, TreeSet<Integer>> positions = new HashMap<>();
    /** Where each document is, by its _id, for {@link #remove}, which is given the document alone. */
    private final Map<Object, Integer> byId = new HashMap<>();
    /**
     * A one-key index's documents a null lookup must find: the key missing or null there, or an
     * array there that is empty or holds null, a document or an array (mongod's null matches
     * reach into those); more than MongoDB matches, never fewer.
     */
    private final TreeSet<Integer> nullish = new TreeSet<>();
    private long entries;

    MemorySecondaryIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
    }

    @Override
    public Integer getPosition(Document document) {
        return null; // not unique: the _id index says where a document is
    }

    @Override
    public synchronized void checkAdd(Document document, MongoCollection<Integer> collection) {
        getKeyValues(document); // parallel arrays in a compound key refuse the write, as mongod does
    }

    @Override
    public synchronized void add(Document document, Integer position, MongoCollection<Integer> collection) {
        byId.put(document.get("_id"), position);
        if (skipped(document)) {
            return;
        }
        link(document, position);
    }

    private void link(Document document, Integer position) {
        for (KeyValue k : getKeyValues(document)) {
            if (positions.computeIfAbsent(k, x -> new TreeSet<>()).add(position)) {
                entries++;
            }
        }
        if (mayHoldNull(document)) {
            nullish.add(position);
        }
    }

    private boolean mayHoldNull(Document document) {
        if (keys().size() != 1 || isSparse()) {
            return false;
        }
        Object v = Utils.getSubdocumentValue(document, keys().get(0));
        if (v == null || v instanceof Missing) {
            return true;
        }
        if (v instanceof Collection<?> c) {
            return c.isEmpty() || c.stream().anyMatch(e -> e == null || e instanceof Missing || e instanceof Document
                    || e instanceof Collection<?>);
        }
        return v instanceof Document;
    }

    @Override
    public synchronized Integer remove(Document document) {
        Integer position = byId.remove(document.get("_id"));
        if (position != null && !skipped(document)) {
            unlink(document, position);
        }
        return position;
    }

    private void unlink(Document document, Integer position) {
        nullish.remove(position);
        for (KeyValue k : getKeyValues(document)) {
            TreeSet<Integer> at = positions.get(k);
            if (at != null && at.remove(position)) {
                entries--;
                if (at.isEmpty()) {
                    positions.remove(k);
                }
            }
        }
    }

    /** A sparse index holds no entry for a document with none of its keys. */
    private boolean skipped(Document document) {
        return isSparse() && keys().stream().allMatch(k -> Utils.getSubdocumentValue(document, k) instanceof Missing);
    }

    @Override
    public synchronized boolean canHandle(Document query) {
        List<List<Object>> values = lookups(query);
        return values != null && combinations(values) <= MAX_LOOKUPS || allOf(query) != null;
    }

    @Override
    public synchronized Iterable<Integer> getPositions(Document query) {
        TreeSet<Integer> found = new TreeSet<>(); // the collection's order, as a scan would give them
        List<List<Object>> values = lookups(query);
        if (values == null || combinations(values) > MAX_LOOKUPS) {
            return holdingAll(allOf(query));
        }
        if (values.size() == 1 && values.get(0).stream().anyMatch(java.util.Objects::isNull)) { // List.of's contains(null) throws
            found.addAll(nullish);
            values = List.of(values.get(0).stream().filter(java.util.Objects::nonNull).toList());
        }
        for (Document probe : probes(values)) {
            for (KeyValue k : getKeyValues(probe)) { // normalized as the stored keys are (1 and 1.0 alike)
                TreeSet<Integer> at = positions.get(k);
                if (at != null) {
                    found.addAll(at);
                }
            }
        }
        return new ArrayList<>(found);
    }

    /**
     * On a one-key index, the plain values a {@code $all} the query ANDs on its key asks every match
     * to hold (the proxy's substring tags, docs/query-model.md#text-indexes); null if none.
     */
    private List<Object> allOf(Document query) {
        if (keys().size() != 1) {
            return null;
        }
        for (Object condition : QueryConjuncts.of(query).getOrDefault(keys().get(0), List.of())) {
            if (condition instanceof Document d && d.size() == 1 && d.get("$all") instanceof Collection<?> all
                    && !all.isEmpty() && all.size() <= MAX_LOOKUPS && all.stream().allMatch(MemorySecondaryIndex::plain)) {
                return new ArrayList<>(all);
            }
        }
        return null;
    }

    /** The documents holding every one of the values: the smallest one's positions, kept where each other's are. */
    private List<Integer> holdingAll(List<Object> values) {
        List<TreeSet<Integer>> sets = new ArrayList<>();
        for (Object v : values) {
            TreeSet<Integer> union = new TreeSet<>();
            Document probe = new Document();
            Utils.changeSubdocumentValue(probe, keys().get(0), v); // the key may be a path: __fle.name
            for (KeyValue k : getKeyValues(probe)) {
                TreeSet<Integer> at = positions.get(k);
                if (at != null) {
                    union.addAll(at);
                }
            }
            if (union.isEmpty()) {
                return List.of();
            }
            sets.add(union);
        }
        sets.sort(java.util.Comparator.comparingInt(TreeSet::size));
        List<Integer> out = new ArrayList<>();
        for (Integer p : sets.get(0)) {
            if (sets.stream().allMatch(set -> set.contains(p))) {
                out.add(p);
            }
        }
        return out;
    }

    /** For each key, the plain values one of the query's conditions on it asks for; null if a key has none. */
    private List<List<Object>> lookups(Document query) {
        Map<String, List<Object>> conjuncts = QueryConjuncts.of(query);
        List<List<Object>> out = new ArrayList<>();
        for (String key : keys()) {
            List<Object> chosen = null;
            for (Object condition : conjuncts.getOrDefault(key, List.of())) {
                chosen = values(condition, keys().size() == 1 && !isSparse()); // a sparse index lacks the documents without the key
                if (chosen != null) {
                    break;
                }
            }
            if (chosen == null) {
                return null;
            }
            out.add(chosen);
        }
        return out;
    }

    /** What a condition asks to equal: a plain value, {$eq: v} or {$in: [v…]}; null for any other condition. */
    private static List<Object> values(Object condition, boolean oneKey) {
        if (plain(condition)) {
            return List.of(condition);
        }
        if (condition instanceof Document d && d.size() == 1) {
            Object operand = d.values().iterator().next();
            if (d.containsKey("$eq") && plain(operand)) {
                return List.of(operand);
            }
            if (d.containsKey("$in") && operand instanceof Collection<?> in && in.stream().allMatch(
                    v -> plain(v) || v == null && oneKey)) {
                return new ArrayList<>(in);
            }
        }
        return null;
    }

    /** Values whose equality is their index key's: not null or missing, not documents, arrays or patterns. */
    private static boolean plain(Object v) {
        return v != null && !(v instanceof Missing) && (v instanceof Number || v instanceof String
                || v instanceof Boolean || v instanceof BinData || v instanceof ObjectId || v instanceof Instant
                || v instanceof UUID || v instanceof LegacyUUID);
    }

    private static long combinations(List<List<Object>> values) {
        long n = 1;
        for (List<Object> v : values) {
            n *= v.size();
            if (n > MAX_LOOKUPS) {
                return n;
            }
        }
        return n;
    }

    /** One document per combination of the keys' values, each value at its key's path. */
    private List<Document> probes(List<List<Object>> values) {
        List<Document> out = new ArrayList<>();
        out.add(new Document());
        List<String> keys = keys();
        for (int i = 0; i < keys.size(); i++) {
            List<Document> next = new ArrayList<>();
            for (Document partial : out) {
                for (Object v : values.get(i)) {
                    Document probe = partial.cloneDeeply();
                    Utils.changeSubdocumentValue(probe, keys.get(i), v);
                    next.add(probe);
                }
            }
            out = next;
        }
        return out;
    }

    @Override
    public synchronized long getCount() {
        return entries;
    }

    @Override
    public synchronized long getDataSize() {
        return entries;
    }

    @Override
    public synchronized void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        getKeyValues(newDocument);
    }

    @Override
    public synchronized void updateInPlace(Document oldDocument, Document newDocument, Integer position,
                                           MongoCollection<Integer> collection) {
        if (nullAwareEqualsKeys(oldDocument, newDocument)) {
            return;
        }
        if (!skipped(oldDocument)) {
            unlink(oldDocument, position);
        }
        if (!skipped(newDocument)) {
            link(newDocument, position);
        }
    }

    @Override
    public synchronized void drop() {
        positions.clear();
        nullish.clear();
        byId.clear();
        entries = 0;
    }

    /** Positions held for a key value, for tests: how many documents the index lists under it. */
    synchronized int positionsOf(KeyValue k) {
        TreeSet<Integer> at = positions.get(k);
        return at == null ? 0 : at.size();
    }

    @Override
    public Set<KeyValue> getKeyValues(Document document) {
        return super.getKeyValues(document);
    }
}
