package dev.fleproxy.rewrite.bson;

/** The limits the rewriters hold BSON to, on the way in and on the way out. */
public final class BsonLimits {
    /** MongoDB's own document size limit, checked on what is about to be stored. */
    public static final int MAX_DOCUMENT = 16 * 1024 * 1024;
    /** Deeper nesting is malformed input here (the server allows 100 levels in stored documents). */
    public static final int MAX_DEPTH = 1000;

    private BsonLimits() {
    }
}
