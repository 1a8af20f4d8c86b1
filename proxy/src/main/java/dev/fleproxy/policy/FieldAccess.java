package dev.fleproxy.policy;

import java.util.Set;

/**
 * Who may do what with one policy field (docs/access.md): {@code reveal} sees its plaintext, every
 * other identity gets its {@code mask}; {@code query} may use it in filters, sorts and stages the
 * proxy evaluates; {@code write} may insert or update it. A null set is everyone (a field without
 * rules behaves as before identities existed). The identities {@code deny} names are refused where
 * the others get the mask. With {@code reveal} given, {@code query} defaults
 * to the same identities: an identity that could filter on the plaintext would learn it by search.
 */
public record FieldAccess(Set<String> reveal, Mask mask, int keep, Set<String> deny, Set<String> query,
                          Set<String> write) {
    public static final FieldAccess OPEN = new FieldAccess(null, Mask.DENY, 0, Set.of(), null, null);

    /** What an identity that may not see the plaintext gets instead. */
    public enum Mask {
        /** The field is returned as null: the document keeps its shape. */
        REDACT,
        /** A string keeps its last {@code keep} characters, letters and digits before them become '*'. */
        PARTIAL,
        /** An HMAC-SHA-256 of the value under a key derived from the collection's: equal values, equal pseudonyms. */
        PSEUDONYM,
        /** A request whose reply would return the field is refused (9720040). */
        DENY
    }

    public FieldAccess {
        reveal = reveal == null ? null : Set.copyOf(reveal);
        deny = deny == null ? Set.of() : Set.copyOf(deny);
        query = query == null ? null : Set.copyOf(query);
        write = write == null ? null : Set.copyOf(write);
    }

    public boolean open() {
        return reveal == null && query == null && write == null;
    }

    public boolean reveals(String identity) {
        return reveal == null || reveal.contains(identity);
    }

    /** What this identity gets instead of the plaintext; null if it sees the plaintext. */
    public Mask maskFor(String identity) {
        return reveals(identity) ? null : deny.contains(identity) ? Mask.DENY : mask;
    }

    public boolean mayQuery(String identity) {
        return query == null || query.contains(identity);
    }

    public boolean mayWrite(String identity) {
        return write == null || write.contains(identity);
    }
}
