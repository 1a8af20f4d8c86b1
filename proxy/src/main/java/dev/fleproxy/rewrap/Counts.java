package dev.fleproxy.rewrap;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * What a run has done so far: documents examined and rewritten, policy fields by category (gone
 * and contended count documents), and the documents of the listed categories by _id (left as
 * they were, or adopted). Kept in the checkpoint, so a resumed run's summary covers the whole
 * collection.
 */
final class Counts {
    long examined;
    long rewritten;
    /** Documents with at least one field left as it was (or contended). */
    long leftDocuments;
    final Map<Category, Long> fields = new EnumMap<>(Category.class);
    final Map<Category, Listed> listed = new EnumMap<>(Category.class);

    void field(Category c) {
        fields.merge(c, 1L, Long::sum);
    }

    /** One document done: its fields' categories counted, and it listed once under each listed one. */
    void document(BsonValue id, Collection<Category> categories) {
        categories.forEach(this::field);
        Set<Category> distinct = categories.isEmpty() ? EnumSet.noneOf(Category.class) : EnumSet.copyOf(categories);
        for (Category c : distinct) {
            if (c.listed()) {
                listed.computeIfAbsent(c, k -> new Listed()).add(id);
            }
        }
        if (distinct.stream().anyMatch(Category::skipped)) {
            leftDocuments++;
        }
    }

    /** Adds a later batch's counts (batches are added in _id order, so the lists stay the first ones). */
    void add(Counts later) {
        examined += later.examined;
        rewritten += later.rewritten;
        leftDocuments += later.leftDocuments;
        later.fields.forEach((c, n) -> fields.merge(c, n, Long::sum));
        later.listed.forEach((c, ids) -> listed.computeIfAbsent(c, k -> new Listed()).addAll(ids));
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
        BsonDocument l = new BsonDocument();
        listed.forEach((c, ids) -> l.append(c.label(), ids.toBson()));
        return new BsonDocument("examined", new BsonInt64(examined)).append("rewritten", new BsonInt64(rewritten))
                .append("leftDocuments", new BsonInt64(leftDocuments)).append("fields", f).append("listed", l);
    }

    static Counts fromBson(BsonDocument d) {
        Counts c = new Counts();
        c.examined = d.getNumber("examined", new BsonInt64(0)).longValue();
        c.rewritten = d.getNumber("rewritten", new BsonInt64(0)).longValue();
        c.leftDocuments = d.getNumber("leftDocuments", new BsonInt64(0)).longValue();
        for (Map.Entry<String, BsonValue> e : d.getDocument("fields", new BsonDocument()).entrySet()) {
            c.fields.put(category(e.getKey()), e.getValue().asNumber().longValue());
        }
        for (Map.Entry<String, BsonValue> e : d.getDocument("listed", new BsonDocument()).entrySet()) {
            c.listed.put(category(e.getKey()), Listed.fromBson(e.getValue().asDocument()));
        }
        return c;
    }

    private static Category category(String label) {
        return Category.valueOf(label.toUpperCase(Locale.ROOT));
    }

    /** "plaintext 12, previous_key 19,988, current 0": the categories met, in their order. */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (Category c : Category.values()) {
            if (of(c) > 0) {
                b.append(b.length() == 0 ? "" : ", ").append(c.label()).append(' ')
                        .append(String.format(Locale.ROOT, "%,d", of(c)));
            }
        }
        return b.length() == 0 ? "none" : b.toString();
    }

    /** One line per listed category met: {@code left (unreadable): 2 documents: 17, "x"}. */
    List<String> listing() {
        List<String> lines = new ArrayList<>();
        listed.forEach((c, ids) -> lines.add((c.skipped() ? "left (" : "adopted (") + c.label() + "): " + ids.describe()));
        return lines;
    }
}
