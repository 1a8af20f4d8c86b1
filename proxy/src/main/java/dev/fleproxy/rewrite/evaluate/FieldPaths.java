package dev.fleproxy.rewrite.evaluate;

/** Dotted field paths split into segments, as filters, sort and projection name fields. */
final class FieldPaths {
    /** The server's limit on a path's length in segments (BSONDepth for user storage). */
    private static final int MAX_SEGMENTS = 100;

    private FieldPaths() {
    }

    /**
     * The segments of a dotted path; refuses an empty path or segment (which the server reads in
     * ways that differ between commands) and overlong paths. 'where' names the caller in messages.
     */
    static String[] split(String path, String where) {
        String[] segments = path.split("\\.", -1);
        if (segments.length > MAX_SEGMENTS) {
            throw new NotEvaluable(where + ": the path " + path + " is too long");
        }
        for (String s : segments) {
            if (s.isEmpty()) {
                throw new NotEvaluable(where + ": the path '" + path + "' has an empty field name");
            }
        }
        return segments;
    }
}
