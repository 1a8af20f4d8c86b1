package dev.fleproxy.rewrite.evaluate;

/**
 * A character class [...] of a PCRE2 pattern, translated to a Java class with the same members.
 * Allowed inside: literal characters and ranges between them, the ASCII class escapes \d \D \w \W
 * \s \S, \t \n \r \f \e \a, \xhh and \x{h...}, a backslash before ASCII punctuation or space; a '-'
 * first, last or as a range. Refused, because Java reads them otherwise or PCRE2 has syntax Java
 * lacks: ']' as the first member, '[' (POSIX [:alpha:], Java's nested classes), "&&" (Java's
 * intersection), \b (backspace in PCRE2), \Q, and a '-' next to a class escape or after a range.
 * Under i, ranges beyond ASCII are refused (their caseless closure is PCRE2's Unicode tables).
 */
final class PcreClass {
    private PcreClass() {
    }

    /** Reads the class whose '[' was just read; returns it as a Java class. */
    static String read(PcreCursor in, boolean caseless) {
        StringBuilder body = new StringBuilder("[");
        if (in.accept('^')) {
            body.append('^');
        }
        if (in.peek() == ']') {
            throw in.refuse("a ']' as the first member of a class reads differently in Java");
        }
        while (true) {
            if (!in.more()) {
                throw in.refuse("a class has no closing ]");
            }
            int c = in.next();
            if (c == ']') {
                return body.append(']').toString();
            }
            if (c == '[') {
                throw in.refuse("'[' inside a class (POSIX classes, Java's nested classes) is not supported");
            }
            if (c == '&' && in.peek() == '&') {
                throw in.refuse("\"&&\" inside a class is an intersection in Java");
            }
            String shorthand = c == '\\' ? shorthand(in) : null;
            if (shorthand != null) {
                if (in.peek() == '-' && in.peekSecond() != ']') {
                    throw in.refuse("a '-' after a class escape such as \\d");
                }
                body.append(shorthand);
                continue;
            }
            member(in, c == '\\' ? escapedLiteral(in) : c, body, caseless);
        }
    }

    /** A literal member starting at lo, alone or as the start of a range lo-hi. */
    private static void member(PcreCursor in, int lo, StringBuilder body, boolean caseless) {
        if (in.peek() != '-' || in.peekSecond() == ']' || in.peekSecond() == -1) {
            append(in, body, lo, lo, caseless);
            return;
        }
        in.next(); // '-'
        int hi = in.next();
        if (hi == '[') {
            throw in.refuse("'[' inside a class is not supported");
        }
        if (hi == '\\') {
            if (shorthand(in) != null) {
                throw in.refuse("a range ending in a class escape such as \\d");
            }
            hi = escapedLiteral(in);
        }
        if (hi < lo) {
            throw in.refuse("a range out of order");
        }
        append(in, body, lo, hi, caseless);
        if (in.peek() == '-' && in.peekSecond() != ']') {
            throw in.refuse("a '-' right after a range");
        }
    }

    private static void append(PcreCursor in, StringBuilder body, int lo, int hi, boolean caseless) {
        body.append(PcreCase.escaped(lo));
        if (hi != lo) {
            body.append('-').append(PcreCase.escaped(hi));
        }
        if (!caseless) {
            return;
        }
        if (hi > 0x7F && hi != lo) {
            throw in.refuse("under the i option a class range beyond ASCII is not supported");
        }
        for (int c = lo; c <= hi; c++) {
            PcreCase.appendOtherCases(body, c, in);
        }
    }

    /** After a backslash: one of \d \D \w \W \s \S as Java writes it (ASCII in both), else null. */
    private static String shorthand(PcreCursor in) {
        int c = in.peek();
        if (c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S') {
            in.next();
            return "\\" + (char) c;
        }
        return null;
    }

    /** After a backslash inside a class: the literal character it stands for. */
    private static int escapedLiteral(PcreCursor in) {
        int c = in.next();
        if (c == 'b') {
            throw in.refuse("\\b inside a class is a backspace in PCRE2 and an error in Java");
        }
        return PcreTranslator.simpleEscape(in, c);
    }
}
