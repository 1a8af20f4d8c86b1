package dev.fleproxy.policy;

import dev.fleproxy.crypto.TextTags;
import java.util.List;

/**
 * One encrypted field of a collection: a dotted path, randomized or deterministic, who may see,
 * query and write its plaintext ({@link FieldAccess#OPEN}: everyone), and its search indexes
 * (range: null, text: empty when none; at most one text index of each kind), whose tags the proxy
 * stores beside the envelope.
 */
public record FieldRule(String path, boolean deterministic, FieldAccess access, RangeIndex range, List<TextIndex> text) {
    public FieldRule {
        text = List.copyOf(text);
    }

    public FieldRule(String path, boolean deterministic) {
        this(path, deterministic, FieldAccess.OPEN, null, List.of());
    }

    public FieldRule(String path, boolean deterministic, FieldAccess access) {
        this(path, deterministic, access, null, List.of());
    }

    /** True if a search index of any kind is on the field. */
    public boolean indexed() {
        return range != null || !text.isEmpty();
    }

    /** The field's text index of this kind, or null. */
    public TextIndex text(TextTags.Kind kind) {
        for (TextIndex t : text) {
            if (t.kind() == kind) {
                return t;
            }
        }
        return null;
    }
}
