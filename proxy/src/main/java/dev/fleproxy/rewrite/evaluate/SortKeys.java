package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonUndefined;
import org.bson.BsonValue;

/**
 * A document's sort key as the server computes it (sort_key_generator.cpp): the index keys a
 * B-tree index with the sort pattern as its key pattern would hold for the document
 * (btree_key_generator.cpp), of which the first in the pattern's order is the key. So a missing
 * field keys as null; an array keys as each of its elements (ascending takes the least, descending
 * the greatest); an empty array at the end of a path keys as undefined, below null; a path going on
 * past an array keys as that field of each element, null for an element that is not a document;
 * an array inside an array is one value. Fields going through one array take their values from
 * the same element; two different arrays on one level ("parallel arrays") make the server fail
 * the query, and this refuses too.
 */
final class SortKeys {
    private static final BsonDocument EMPTY = new BsonDocument();

    private final String[][] paths;
    private final Comparator<BsonValue[]> order;

    SortKeys(String[][] paths, Comparator<BsonValue[]> order) {
        this.paths = paths;
        this.order = order;
    }

    /** The sort key of doc: one value per field of the pattern. */
    BsonValue[] of(BsonDocument doc) {
        List<BsonValue[]> keys = new ArrayList<>();
        int[] offsets = new int[paths.length];
        keys(offsets, new BsonValue[paths.length], doc, keys);
        return keys.stream().min(order).orElseThrow();
    }

    /** _getKeysWithArray: fields still to walk start at offsets[i] in obj. */
    private void keys(int[] offsets, BsonValue[] fixed, BsonDocument obj, List<BsonValue[]> out) {
        BsonArray array = null;
        String arrayPrefix = null;
        boolean[] throughArray = new boolean[paths.length];
        for (int i = 0; i < paths.length; i++) {
            if (offsets[i] == paths[i].length) {
                continue;
            }
            int start = offsets[i];
            BsonValue e = extract(obj, paths[i], offsets, i);
            if (e == null) {
                fixed[i] = BsonNull.VALUE;
                offsets[i] = paths[i].length;
            } else if (e.isArray()) {
                String prefix = String.join(".", Arrays.copyOfRange(paths[i], start, offsets[i]));
                if (array != null && !prefix.equals(arrayPrefix)) {
                    throw new NotEvaluable("sort: cannot sort with keys that are parallel arrays (" + arrayPrefix
                            + ", " + prefix + "); the server fails such a query");
                }
                array = e.asArray();
                arrayPrefix = prefix;
                throughArray[i] = true;
            } else {
                fixed[i] = e;
            }
        }
        if (array == null) {
            out.add(fixed.clone());
        } else if (array.isEmpty()) {
            element(new BsonUndefined(), offsets, fixed, throughArray, out);
        } else {
            for (BsonValue element : array) {
                element(element, offsets, fixed, throughArray, out);
            }
        }
    }

    /** One element of the array: the key of fields ending at the array, the rest walked inside it. */
    private void element(BsonValue entry, int[] offsets, BsonValue[] fixed, boolean[] throughArray,
                         List<BsonValue[]> out) {
        int[] offs = offsets.clone();
        BsonValue[] fx = fixed.clone();
        for (int i = 0; i < paths.length; i++) {
            if (throughArray[i] && offs[i] == paths[i].length) {
                fx[i] = entry;
            }
        }
        keys(offs, fx, entry.isDocument() ? entry.asDocument() : EMPTY, out);
    }

    /**
     * extractElementAtPathOrArrayAlongPath: from obj along paths[field] starting at offsets[field],
     * through documents, stopping at an array or the end (offsets[field] left after what was read);
     * null when missing or a scalar comes before the end.
     */
    private static BsonValue extract(BsonDocument obj, String[] path, int[] offsets, int field) {
        BsonDocument current = obj;
        while (true) {
            BsonValue sub = current.get(path[offsets[field]++]);
            if (sub == null) {
                return null;
            }
            if (sub.isArray() || offsets[field] == path.length) {
                return sub;
            }
            if (!sub.isDocument()) {
                return null;
            }
            current = sub.asDocument();
        }
    }
}
