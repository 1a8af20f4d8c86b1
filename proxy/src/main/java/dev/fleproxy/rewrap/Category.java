package dev.fleproxy.rewrap;

import java.util.Locale;

/** What rewrap found in one policy field, or did with one document. */
public enum Category {
    /** Already a v2 envelope under the collection's key, suite and variant: left alone. */
    CURRENT(false),
    /** Not an envelope, adopted (plaintextReads: allow, or --adopt-plaintext): encrypted. */
    PLAINTEXT(true),
    /** A v1 envelope under the current key and suite: rewritten as v2. */
    V1(true),
    /** An envelope under one of {@code previousKeys}: re-encrypted under the key. */
    PREVIOUS_KEY(true),
    /** Under the key, but another suite or variant (the policy changed them): re-encrypted. */
    OTHER_SUITE(true),
    /**
     * A range index's tags ({@code __fle.<field>}) missing (written before the index) or not the
     * ones the field's value and the collection's key give: written.
     */
    TAGS(true),
    /**
     * Plaintext a client could have written, in a plaintextReads: deny collection, run without
     * --adopt-plaintext: the proxy never wrote it there, so it is not sealed unasked. Skipped.
     */
    PLAINTEXT_DENIED(false),
    /** A value rewrap never seals, in any mode (see {@link Adoption}): skipped. */
    NOT_ADOPTABLE(false),
    /** An envelope under a key that is neither the key nor a previous key: skipped. */
    UNKNOWN_KEY(false),
    /**
     * An envelope, or what is left of one, that does not open here (tampered, cut, moved from
     * another namespace or field, or opening to no valid BSON value): skipped.
     */
    UNREADABLE(false),
    /** Changed by the application at every retry: skipped (run again, or --resume). */
    CONTENDED(false),
    /** Deleted by the application between reading and rewriting: nothing to do. */
    GONE(false);

    /** Whether finding it in a field means the field is rewritten. */
    final boolean rewrites;

    Category(boolean rewrites) {
        this.rewrites = rewrites;
    }

    /** The name in summaries and the checkpoint. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Skipped: left as it was, and the run's exit status says so. */
    boolean skipped() {
        return this == PLAINTEXT_DENIED || this == NOT_ADOPTABLE || this == UNKNOWN_KEY || this == UNREADABLE
                || this == CONTENDED;
    }

    /**
     * Whether the documents met in it are listed by _id: the ones left as they were, and the
     * adopted ones (sealed although the proxy never wrote them, so someone may want to look).
     */
    boolean listed() {
        return skipped() || this == PLAINTEXT;
    }
}
