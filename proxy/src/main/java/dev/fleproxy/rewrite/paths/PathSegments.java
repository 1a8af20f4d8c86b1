package dev.fleproxy.rewrite.paths;

/**
 * The segments of a dotted path that are passed over on the way to a field, as MongoDB's dotted
 * paths pass over them: array indexes ("items.0.price") and positional operators
 * ("items.$[].price").
 */
public final class PathSegments {
    private PathSegments() {
    }

    /** An array index or positional operator: passed over on the way to a field. */
    public static boolean transparent(String segment) {
        return segment.startsWith("$") || (!segment.isEmpty() && segment.chars().allMatch(Character::isDigit));
    }

    /** The same test on a name's bytes. */
    public static boolean transparent(byte[] buf, int start, int end) {
        if (end == start) {
            return false;
        }
        if (buf[start] == '$') {
            return true;
        }
        for (int i = start; i < end; i++) {
            if (buf[i] < '0' || buf[i] > '9') {
                return false;
            }
        }
        return true;
    }

    /** Drops array indexes and positional operators from a path ("a.0.b" → "a.b"). */
    public static String normalize(String path) {
        if (path.indexOf('.') < 0) {
            return path;
        }
        StringBuilder out = new StringBuilder(path.length());
        for (String seg : path.split("\\.", -1)) {
            if (transparent(seg)) {
                continue;
            }
            if (out.length() > 0) {
                out.append('.');
            }
            out.append(seg);
        }
        return out.toString();
    }
}
