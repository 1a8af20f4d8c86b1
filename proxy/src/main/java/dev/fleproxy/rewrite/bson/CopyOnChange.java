package dev.fleproxy.rewrite.bson;

import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Documents and arrays rebuilt only where a value changes. Entries are visited once, in order;
 * nothing is copied until a mapped value differs (by identity) from its input, then the entries
 * before it are copied once and the rest follow. Input that needs no change comes back as the very
 * same object, so a message nobody rewrote keeps its raw bytes and passes byte for byte.
 */
public final class CopyOnChange {
    /** The new value of one entry; the same object to keep it. */
    public interface Entries {
        BsonValue map(String key, BsonValue value);
    }

    /** The new value of one element; the same object to keep it. */
    public interface Elements {
        BsonValue map(BsonValue value);
    }

    private CopyOnChange() {
    }

    public static BsonDocument map(BsonDocument doc, Entries f) {
        // one entry set, iterated again only to copy what precedes the first change (a raw
        // document decodes itself once per entrySet() call)
        Set<Map.Entry<String, BsonValue>> entries = doc.entrySet();
        BsonDocument out = null;
        int i = 0;
        for (Map.Entry<String, BsonValue> e : entries) {
            BsonValue v = e.getValue();
            BsonValue nv = f.map(e.getKey(), v);
            if (nv != v && out == null) {
                out = new BsonDocument();
                int j = 0;
                for (Map.Entry<String, BsonValue> before : entries) {
                    if (j++ == i) {
                        break;
                    }
                    out.append(before.getKey(), before.getValue());
                }
            }
            if (out != null) {
                out.append(e.getKey(), nv);
            }
            i++;
        }
        return out == null ? doc : out;
    }

    public static BsonArray map(BsonArray array, Elements f) {
        BsonArray out = null;
        for (int i = 0; i < array.size(); i++) {
            BsonValue v = array.get(i);
            BsonValue nv = f.map(v);
            if (nv != v && out == null) {
                out = new BsonArray(array.size());
                for (int j = 0; j < i; j++) {
                    out.add(array.get(j));
                }
            }
            if (out != null) {
                out.add(nv);
            }
        }
        return out == null ? array : out;
    }

    /**
     * The document with one entry's value replaced; the document itself if value is what it holds
     * (compared by identity: the caller passes what it got from this document, since a raw
     * document decodes a new object on every get()).
     */
    public static BsonDocument with(BsonDocument doc, String key, BsonValue value, BsonValue old) {
        if (value == old) {
            return doc;
        }
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            out.append(e.getKey(), e.getKey().equals(key) ? value : e.getValue());
        }
        return out;
    }
}
