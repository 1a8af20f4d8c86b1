package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The values distinct returns for a key: along a dotted path through documents, and through the
 * documents of an array met on the way; at the end of the path an array gives each of its
 * elements (an array nested in it is one value), anything else itself, null included; a document
 * without the path gives nothing. Values the server counts as equal (1, 1.0, 1L) are one, and the
 * result is in MongoDB's order of BSON values. A numeric segment (an array index or a field named
 * by digits) is refused rather than guessed.
 */
public final class DistinctValues {
    private final String[] path;

    private DistinctValues(String[] path) {
        this.path = path;
    }

    public static DistinctValues compile(String key) {
        String[] path = FieldPaths.split(key, "distinct");
        for (String segment : path) {
            if (PathValues.allDigits(segment)) {
                throw new NotEvaluable("distinct of a key with a numeric segment ('" + segment + "')");
            }
        }
        return new DistinctValues(path);
    }

    /** The distinct values of the key over these documents, in BSON order. */
    public List<BsonValue> of(Collection<BsonDocument> docs) {
        TreeSet<BsonValue> values = new TreeSet<>(BsonOrder.COMPARATOR);
        for (BsonDocument d : docs) {
            collect(d, 0, values);
        }
        return new ArrayList<>(values);
    }

    private void collect(BsonDocument doc, int from, TreeSet<BsonValue> out) {
        BsonValue v = doc.get(path[from]);
        if (v == null) {
            return;
        }
        if (from == path.length - 1) {
            if (v.isArray()) {
                out.addAll(v.asArray());
            } else {
                out.add(v);
            }
        } else if (v.isDocument()) {
            collect(v.asDocument(), from + 1, out);
        } else if (v.isArray()) {
            for (BsonValue element : v.asArray()) {
                if (element.isDocument()) {
                    collect(element.asDocument(), from + 1, out);
                }
            }
        }
    }
}
