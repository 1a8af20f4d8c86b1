package dev.fleproxy.rewrite.evaluate.expr;

import org.bson.BsonArray;
import org.bson.BsonValue;

/**
 * A field path read as the server's expressions read it: through documents, and through an array
 * by taking the path in each of its documents (and arrays), skipping scalars and the elements
 * where it is missing, which gives an array. Missing is null.
 */
final class Paths {
    private Paths() {
    }

    static BsonValue walk(BsonValue at, String[] path, int i) {
        if (i == path.length) {
            return at;
        }
        if (at.isDocument()) {
            BsonValue next = at.asDocument().get(path[i]);
            return next == null ? null : walk(next, path, i + 1);
        }
        if (at.isArray()) {
            BsonArray out = new BsonArray();
            for (BsonValue element : at.asArray()) {
                if (element.isDocument() || element.isArray()) {
                    BsonValue v = walk(element, path, i);
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
