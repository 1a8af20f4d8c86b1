package dev.fleproxy.policy;

/** One encrypted field of a collection: a dotted path, randomized or deterministic. */
public record FieldRule(String path, boolean deterministic) {
}
