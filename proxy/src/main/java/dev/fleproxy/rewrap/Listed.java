package dev.fleproxy.rewrap;

import dev.fleproxy.rewrite.bson.BsonValueBytes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * The documents met in one category, by _id: how many in all, and the first {@link #MAX_IDS} of
 * them. The list is bounded (also to {@link #MAX_BYTES} of _ids, which may be large) because it
 * lives in the checkpoint, a document under MongoDB's 16 MiB limit, and in the summary a person
 * reads; the count is always whole. Only _ids are kept, never a field's value.
 */
final class Listed {
    static final int MAX_IDS = 100;
    static final int MAX_BYTES = 16 * 1024;
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    long documents;
    final List<BsonValue> ids = new ArrayList<>();
    private int bytes;
    /** Set once an _id did not fit: later ones are not kept either, so the list stays the first ones. */
    private boolean full;

    void add(BsonValue id) {
        documents++;
        if (full || ids.size() >= MAX_IDS) {
            return;
        }
        int size = BsonValueBytes.of(id).bytes().length;
        if (bytes + size > MAX_BYTES) {
            full = true;
            return;
        }
        ids.add(id);
        bytes += size;
    }

    /** Adds a later list: its kept _ids while they fit, and its whole count. */
    void addAll(Listed later) {
        for (BsonValue id : later.ids) {
            add(id);
        }
        documents += later.documents - later.ids.size();
        full |= later.full;
    }

    BsonDocument toBson() {
        return new BsonDocument("documents", new BsonInt64(documents)).append("ids", new BsonArray(ids));
    }

    static Listed fromBson(BsonDocument d) {
        Listed l = new Listed();
        for (BsonValue id : d.getArray("ids", new BsonArray())) {
            l.add(id);
        }
        l.documents = d.getNumber("documents", new BsonInt64(l.documents)).longValue();
        l.full = l.documents > l.ids.size(); // a list cut before keeps being the first ones
        return l;
    }

    /** {@code 3 documents: "a", 7, {"$oid": "…"}}, and how many more there are when the list is cut. */
    String describe() {
        String list = ids.stream().map(Listed::json).collect(Collectors.joining(", "));
        long more = documents - ids.size();
        return String.format(Locale.ROOT, "%,d document%s: %s%s", documents, documents == 1 ? "" : "s", list,
                more > 0 ? String.format(Locale.ROOT, "%s… and %,d more (only the first %d are kept)",
                        ids.isEmpty() ? "" : ", ", more, ids.size()) : "");
    }

    /** An _id as extended JSON (relaxed), as the shell would show it. */
    private static String json(BsonValue id) {
        String doc = new BsonDocument("_id", id).toJson(JSON);
        return doc.substring("{\"_id\": ".length(), doc.length() - 1);
    }
}
