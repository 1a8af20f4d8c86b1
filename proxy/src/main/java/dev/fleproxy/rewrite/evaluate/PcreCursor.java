package dev.fleproxy.rewrite.evaluate;

/** A position in a regular expression's source, read code point by code point. */
final class PcreCursor {
    private final String source;
    private int pos;

    PcreCursor(String source) {
        this.source = source;
    }

    boolean more() {
        return pos < source.length();
    }

    /** The next code point, or -1 at the end. */
    int peek() {
        return more() ? source.codePointAt(pos) : -1;
    }

    /** The code point after the next one, or -1. */
    int peekSecond() {
        if (!more()) {
            return -1;
        }
        int after = pos + Character.charCount(source.codePointAt(pos));
        return after < source.length() ? source.codePointAt(after) : -1;
    }

    int next() {
        if (!more()) {
            throw refuse("the pattern ends too early");
        }
        int c = source.codePointAt(pos);
        pos += Character.charCount(c);
        return c;
    }

    /** Consumes c if it comes next. */
    boolean accept(int c) {
        if (peek() == c) {
            next();
            return true;
        }
        return false;
    }

    NotEvaluable refuse(String why) {
        return new NotEvaluable("$regex /" + source + "/: " + why);
    }
}
