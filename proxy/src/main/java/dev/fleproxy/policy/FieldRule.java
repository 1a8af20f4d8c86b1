package dev.fleproxy.policy;

/**
 * One encrypted field of a collection: a dotted path, randomized or deterministic, who may see,
 * query and write its plaintext ({@link FieldAccess#OPEN}: everyone), and its search indexes
 * (null: none), whose tags the proxy stores beside the envelope.
 */
public record FieldRule(String path, boolean deterministic, FieldAccess access, RangeIndex range, PrefixIndex prefix) {
    public FieldRule(String path, boolean deterministic) {
        this(path, deterministic, FieldAccess.OPEN, null, null);
    }

    public FieldRule(String path, boolean deterministic, FieldAccess access) {
        this(path, deterministic, access, null, null);
    }

    /** True if a search index of any kind is on the field. */
    public boolean indexed() {
        return range != null || prefix != null;
    }
}
