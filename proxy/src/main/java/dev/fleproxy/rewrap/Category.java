package dev.fleproxy.rewrap;

import java.util.Locale;

/** What rewrap found in one policy field, or did with one document. */
public enum Category {
    /** Already a v2 envelope under the collection's key, suite and variant: left alone. */
    CURRENT(false),
    /** Not an envelope (written before the policy): encrypted. */
    PLAINTEXT(true),
    /** A v1 envelope under the current key and suite: rewritten as v2. */
    V1(true),
    /** An envelope under one of {@code previousKeys}: re-encrypted under the key. */
    PREVIOUS_KEY(true),
    /** Under the key, but another suite or variant (the policy changed them): re-encrypted. */
    OTHER_SUITE(true),
    /** An envelope under a key that is neither the key nor a previous key: skipped. */
    UNKNOWN_KEY(false),
    /** An envelope that fails authentication (tampered, or moved from elsewhere): skipped. */
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
        return this == UNKNOWN_KEY || this == UNREADABLE || this == CONTENDED;
    }
}
