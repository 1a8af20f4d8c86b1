package dev.fleproxy.rewrap;

import java.util.EnumMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * What a run has done so far: documents examined and rewritten, and policy fields by category
 * (gone and contended count documents). Kept in the checkpoint, so a resumed run's summary covers
 * the whole collection.
 */
final class Counts {
    long examined;
    long rewritten;
    final Map<Category, Long> fields = new EnumMap<>(Category.class);

    void field(Category c) {
        fields.merge(c, 1L, Long::sum);
    }

    long of(Category c) {
        return fields.getOrDefault(c, 0L);
    }

    long skipped() {
        return fields.entrySet().stream().filter(e -> e.getKey().skipped()).mapToLong(Map.Entry::getValue).sum();
    }

    BsonDocument toBson() {
        BsonDocument f = new BsonDocument();
        fields.forEach((c, n) -> f.append(c.label(), new BsonInt64(n)));
        return new BsonDocument("examined", new BsonInt64(examined)).append("rewritten", new BsonInt64(rewritten))
                .append("fields", f);
    }

    static Counts fromBson(BsonDocument d) {
        Counts c = new Counts();
        c.examined = d.getNumber("examined", new BsonInt64(0)).longValue();
        c.rewritten = d.getNumber("rewritten", new BsonInt64(0)).longValue();
        for (Map.Entry<String, BsonValue> e : d.getDocument("fields", new BsonDocument()).entrySet()) {
            c.fields.put(Category.valueOf(e.getKey().toUpperCase(java.util.Locale.ROOT)), e.getValue().asNumber().longValue());
        }
        return c;
    }

    /** "plaintext 12, previous_key 19,988, current 0": the categories met, in their order. */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (Category c : Category.values()) {
            if (of(c) > 0) {
                b.append(b.length() == 0 ? "" : ", ").append(c.label()).append(' ')
                        .append(String.format(java.util.Locale.ROOT, "%,d", of(c)));
            }
        }
        return b.length() == 0 ? "none" : b.toString();
    }
}
