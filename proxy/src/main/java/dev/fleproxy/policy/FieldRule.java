package dev.fleproxy.policy;

/**
 * One encrypted field of a collection: a dotted path, randomized or deterministic, and who may
 * see, query and write its plaintext ({@link FieldAccess#OPEN}: everyone).
 */
public record FieldRule(String path, boolean deterministic, FieldAccess access) {
    public FieldRule(String path, boolean deterministic) {
        this(path, deterministic, FieldAccess.OPEN);
    }
}
