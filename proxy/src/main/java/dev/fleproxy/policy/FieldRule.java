package dev.fleproxy.policy;

/**
 * One encrypted field of a collection: a dotted path, randomized or deterministic, who may see,
 * query and write its plaintext ({@link FieldAccess#OPEN}: everyone), and its range index (null:
 * none), whose tags the proxy stores beside the envelope.
 */
public record FieldRule(String path, boolean deterministic, FieldAccess access, RangeIndex range) {
    public FieldRule(String path, boolean deterministic) {
        this(path, deterministic, FieldAccess.OPEN, null);
    }

    public FieldRule(String path, boolean deterministic, FieldAccess access) {
        this(path, deterministic, access, null);
    }
}
