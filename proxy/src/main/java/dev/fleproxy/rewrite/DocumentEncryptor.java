package dev.fleproxy.rewrite;

import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Encrypts the policy fields of a document being written (insert, replacement, $set of a whole
 * sub-document): every encrypted path is replaced by its envelope; arrays of documents on the way
 * to a path are walked element by element; _id is never touched. Returns the input itself when
 * nothing in it is encrypted, so untouched documents keep their raw bytes.
 */
final class DocumentEncryptor {
    private DocumentEncryptor() {
    }

    static BsonDocument encryptDocument(BsonDocument doc, CollectionContext ctx) {
        return fields(doc, "", ctx);
    }

    /** The value found at {@code path}, a prefix of encrypted fields, with those fields encrypted. */
    static BsonValue encryptSubtree(BsonValue value, String path, CollectionContext ctx) {
        if (value.isDocument()) {
            return fields(value.asDocument(), path, ctx);
        }
        if (value.isArray()) {
            BsonArray in = value.asArray();
            BsonArray out = new BsonArray(in.size());
            boolean changed = false;
            for (BsonValue el : in) {
                BsonValue e2 = encryptSubtree(el, path, ctx);
                changed |= e2 != el;
                out.add(e2);
            }
            return changed ? out : value;
        }
        return value;
    }

    private static BsonDocument fields(BsonDocument doc, String prefix, CollectionContext ctx) {
        BsonDocument out = new BsonDocument();
        boolean changed = false;
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            String path = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            BsonValue v = e.getValue();
            BsonValue nv = v;
            EncryptedPaths.Match m = ctx.paths.classify(path);
            if (m.kind() == EncryptedPaths.Kind.EXACT) {
                nv = ctx.encrypt(m.rule(), v);
            } else if (m.kind() == EncryptedPaths.Kind.PREFIX) {
                nv = encryptSubtree(v, path, ctx);
            }
            changed |= nv != v;
            out.append(e.getKey(), nv);
        }
        return changed ? out : doc;
    }
}
