package dev.fleproxy.keys;

/**
 * Whether a key is usable now, for a readiness check: {@code problem} is null if it is (held in a
 * state that allows the use, within its TTL or inside the outage window); {@code fetchMayHelp}
 * says whether asking the KMS now could change that (not held, or expired), as opposed to a
 * refusal it gave within the negative TTL or a state only an operator changes.
 */
public record Usability(String problem, boolean fetchMayHelp) {
    static final Usability OK = new Usability(null, false);
}
