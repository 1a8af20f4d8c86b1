package dev.fleproxy.rewrite.evaluate;

import java.util.function.Predicate;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The values a dotted path reaches in a document, walked as MongoDB's matcher walks it
 * (matcher/path.cpp, BSONElementIterator with non-leaf arrays traversed):
 * <ul>
 * <li>through documents field by field; a scalar before the end of the path reaches "missing";</li>
 * <li>an array in the middle of the path: each element that is a document is walked with the rest
 *     of the path; when the next segment is all digits, the element at that index is reached too
 *     (so "a.0" is both the field "0" of a's documents and a's first element); an array nested in
 *     that array is entered only by such an index, never implicitly;</li>
 * <li>an array at the end of the path: each element, then the array itself (LeafArrays.TRAVERSE,
 *     most operators), or the array alone (NO_TRAVERSAL: $size, $elemMatch).</li>
 * </ul>
 * A missing value is passed to the test as null, as the server passes an EOO element.
 */
final class PathValues {
    /** What the walk yields for an array at the end of the path. */
    enum LeafArrays { TRAVERSE, NO_TRAVERSAL }

    private PathValues() {
    }

    /** Whether test holds for any value the path reaches in doc (null: a missing value). */
    static boolean any(BsonDocument doc, String[] path, LeafArrays leaf, Predicate<BsonValue> test) {
        return fromDocument(doc, path, 0, leaf, test);
    }

    /** getFieldDottedOrArray from segment 'from', then what follows an array it stops at. */
    private static boolean fromDocument(BsonDocument doc, String[] path, int from, LeafArrays leaf,
                                        Predicate<BsonValue> test) {
        BsonDocument current = doc;
        BsonValue value = null;
        int i = from;
        while (i < path.length) {
            value = current.get(path[i]);
            if (value == null || value.isArray()) {
                break;
            }
            if (value.isDocument()) {
                current = value.asDocument();
                i++;
                continue;
            }
            if (i + 1 < path.length) {
                value = null; // a scalar where the path goes on: missing
            }
            break;
        }
        if (value == null || !value.isArray()) {
            return test.test(value);
        }
        BsonArray array = value.asArray();
        if (i + 1 == path.length) {
            return leafArray(array, leaf, test);
        }
        return throughArray(array, path, i + 1, leaf, test);
    }

    private static boolean leafArray(BsonArray array, LeafArrays leaf, Predicate<BsonValue> test) {
        if (leaf == LeafArrays.TRAVERSE) {
            for (BsonValue element : array) {
                if (test.test(element)) {
                    return true;
                }
            }
        }
        return test.test(array);
    }

    /** An array with path[rest..] still to walk: its documents, and the element an index names. */
    private static boolean throughArray(BsonArray array, String[] path, int rest, LeafArrays leaf,
                                        Predicate<BsonValue> test) {
        String next = path[rest];
        boolean digits = allDigits(next);
        boolean last = rest + 1 == path.length;
        for (int index = 0; index < array.size(); index++) {
            BsonValue element = array.get(index);
            boolean atIndex = digits && next.equals(Integer.toString(index));
            if (element.isDocument()) {
                if (fromDocument(element.asDocument(), path, rest, leaf, test)) {
                    return true;
                }
                if (atIndex && (last ? test.test(element)
                        : fromDocument(element.asDocument(), path, rest + 1, leaf, test))) {
                    return true;
                }
            } else if (atIndex) {
                if (last ? test.test(element)
                        : element.isArray() && throughArray(element.asArray(), path, rest + 1, leaf, test)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** str::isAllDigits: ASCII digits only (an empty segment never names an index anyway). */
    static boolean allDigits(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
