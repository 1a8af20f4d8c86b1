package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Translates a regular expression as MongoDB compiles it (PCRE2, UTF mode without UCP, newline LF,
 * options i m s x) into a java.util.regex pattern that matches the same strings, or refuses.
 *
 * <p>An allowlist: literals; . ^ $ |; groups ( ), (?: ), lookaheads (?= ) (?! ); inline options
 * (?i) (?m) (?s), their negations and (?i: ) forms; the quantifiers * + ? {n} {n,} {n,m} (up to
 * 65535) and their lazy forms; \d \D \w \W \s \S (ASCII in both engines); \b \B; \A \z \Z; \t \n
 * \r \f \e \a; \xhh, \x{h...}; \Q...\E; a backslash before ASCII punctuation; classes (PcreClass).
 * Refused, because the engines differ or Java lacks them: possessive quantifiers and atomic groups,
 * lookbehind, back-references (\1, \k, \g), named groups ((?P&lt;, (?&lt;name&gt;), conditionals (?(,
 * recursion (?R), comments (?#, verbs (*, \K \G \R \X \h \H \v \V \N \p \P \c \o, octal escapes,
 * inline x, a '{' that is not a quantifier, a quantifier after nothing repeatable.
 *
 * <p>The output is compiled with no Java flags: the options are spelled out (. as [^\n] or any
 * character, ^ $ \Z as lookarounds on LF only, caseless letters as their PCRE2 case sets, x by
 * dropping white space), so Java's own flag semantics never come in.
 */
final class PcreTranslator {
    private static final String WORD_BOUNDARY = "(?:(?<=\\w)(?!\\w)|(?<!\\w)(?=\\w))";
    private static final String NOT_WORD_BOUNDARY = "(?:(?<=\\w)(?=\\w)|(?<!\\w)(?!\\w))";

    private final PcreCursor in;
    private final boolean extended;
    private final StringBuilder out = new StringBuilder();
    private final Deque<Group> groups = new ArrayDeque<>();
    private boolean caseless;
    private boolean multiline;
    private boolean dotAll;
    /** Whether the last item takes a quantifier. */
    private boolean repeatable;
    /** Whether x skipped white space since the last item. */
    private boolean skippedSpace;

    /** An open group: the options to restore at its ')' and whether it is a lookahead. */
    private record Group(boolean caseless, boolean multiline, boolean dotAll, boolean assertion) {
    }

    private PcreTranslator(String pattern, String options) {
        this.in = new PcreCursor(pattern);
        this.caseless = options.indexOf('i') >= 0;
        this.multiline = options.indexOf('m') >= 0;
        this.dotAll = options.indexOf('s') >= 0;
        this.extended = options.indexOf('x') >= 0;
    }

    /** The Java pattern for a PCRE2 pattern and MongoDB options (already checked: only i m s x u). */
    static Pattern translate(String pattern, String options) {
        PcreTranslator t = new PcreTranslator(pattern, options);
        t.run();
        try {
            return Pattern.compile(t.out.toString());
        } catch (PatternSyntaxException e) {
            throw t.in.refuse("its Java translation does not compile: " + e.getDescription());
        }
    }

    private void run() {
        while (in.more()) {
            int c = in.next();
            if (extended && skipsInExtended(c)) {
                skippedSpace = true;
                continue;
            }
            item(c);
            skippedSpace = false;
        }
        if (!groups.isEmpty()) {
            throw in.refuse("a group has no closing )");
        }
    }

    /** x: PCRE2 drops ASCII white space outside classes; refuses what PCRE2 versions treat apart. */
    private boolean skipsInExtended(int c) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r') {
            return true;
        }
        if (c == 0x0B || c == 0x85 || c == 0x200E || c == 0x200F || c == 0x2028 || c == 0x2029) {
            throw in.refuse(String.format("under x, U+%04X is white space to some PCRE2 versions only", c));
        }
        if (c == '#') {
            throw in.refuse("comments under the x option are not supported");
        }
        return false;
    }

    private void item(int c) {
        switch (c) {
            case '\\' -> escape();
            case '[' -> atom(PcreClass.read(in, caseless));
            case '(' -> open();
            case ')' -> close();
            case '|' -> {
                out.append('|');
                repeatable = false;
            }
            case '.' -> atom(dotAll ? "(?s:.)" : "[^\\n]");
            case '^' -> assertion(multiline ? "(?:\\A|(?<=\\n)(?!\\z))" : "\\A");
            case '$' -> assertion(multiline ? "(?=\\n|\\z)" : "(?=\\n?\\z)");
            case '*', '+', '?' -> quantifier(Character.toString(c));
            case '{' -> quantifier(braces());
            default -> atom(PcreCase.literal(c, caseless, in));
        }
    }

    private void atom(String javaItem) {
        out.append(javaItem);
        repeatable = true;
    }

    private void assertion(String javaItem) {
        out.append(javaItem);
        repeatable = false;
    }

    private void quantifier(String q) {
        if (skippedSpace) {
            throw in.refuse("white space before a quantifier under x reads differently across PCRE2 versions");
        }
        if (!repeatable) {
            throw in.refuse("a quantifier follows nothing repeatable");
        }
        out.append(q);
        if (in.accept('?')) {
            out.append('?'); // lazy: the same strings match
        } else if (in.peek() == '+') {
            throw in.refuse("possessive quantifiers are not supported");
        }
        repeatable = false;
    }

    /** After '{': a strict {n}, {n,} or {n,m}; PCRE2 versions read anything else differently. */
    private String braces() {
        int min = digits();
        int max = min;
        if (in.accept(',')) {
            max = in.peek() == '}' ? -1 : digits();
        }
        if (!in.accept('}') || max != -1 && max < min) {
            throw in.refuse("a '{' that is not a {n}, {n,} or {n,m} quantifier");
        }
        return "{" + min + (max == min ? "" : "," + (max == -1 ? "" : Integer.toString(max))) + "}";
    }

    private int digits() {
        long n = 0;
        int count = 0;
        while (in.peek() >= '0' && in.peek() <= '9' && count < 6) {
            n = n * 10 + (in.next() - '0');
            count++;
        }
        if (count == 0 || n > 65535) {
            throw in.refuse("a '{' that is not a {n}, {n,} or {n,m} quantifier up to 65535");
        }
        return (int) n;
    }

    private void escape() {
        int c = in.next();
        switch (c) {
            case 'd', 'D', 'w', 'W', 's', 'S' -> atom("\\" + (char) c);
            case 'b' -> assertion(WORD_BOUNDARY); // Java 17's \b counts non-ASCII letters as word characters
            case 'B' -> assertion(NOT_WORD_BOUNDARY);
            case 'A' -> assertion("\\A");
            case 'z' -> assertion("\\z");
            case 'Z' -> assertion("(?=\\n?\\z)");
            case 'Q' -> quoted();
            default -> atom(PcreCase.literal(simpleEscape(in, c), caseless, in));
        }
    }

    /** \Q...\E: every character literal up to \E or the end. */
    private void quoted() {
        while (in.more()) {
            int c = in.next();
            if (c == '\\' && in.peek() == 'E') {
                in.next();
                return;
            }
            atom(PcreCase.literal(c, caseless, in));
        }
    }

    /** After a backslash (c read): the character an escape stands for, or a refusal. */
    static int simpleEscape(PcreCursor in, int c) {
        switch (c) {
            case 't': return '\t';
            case 'n': return '\n';
            case 'r': return '\r';
            case 'f': return '\f';
            case 'e': return 0x1B;
            case 'a': return 0x07;
            case 'x': return hex(in);
            default:
                if (c < 128 && !Character.isLetterOrDigit(c)) {
                    return c; // a backslash before punctuation: the character itself in both engines
                }
                throw in.refuse("the escape \\" + Character.toString(c) + " is not supported (back-references, "
                        + "\\h \\R \\X \\K \\p and the like mean other things or nothing in Java)");
        }
    }

    /** After \x: exactly two hex digits, or {1 to 6 hex digits}: a code point, not a surrogate. */
    private static int hex(PcreCursor in) {
        boolean braced = in.accept('{');
        int value = 0;
        int count = 0;
        while (isHexDigit(in.peek()) && count < (braced ? 6 : 2)) {
            value = value * 16 + Character.digit(in.next(), 16);
            count++;
        }
        boolean ok = braced ? count > 0 && in.accept('}') : count == 2;
        if (!ok || value > 0x10FFFF || value >= 0xD800 && value <= 0xDFFF) {
            throw in.refuse("\\x takes two hex digits or {hex digits} naming a Unicode scalar value");
        }
        return value;
    }

    private static boolean isHexDigit(int c) {
        return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
    }

    private void open() {
        if (!in.accept('?')) {
            if (in.peek() == '*') {
                throw in.refuse("(* verbs are not supported");
            }
            push(false);
            out.append('(');
            return;
        }
        int c = in.peek();
        if (c == ':' || c == '=' || c == '!') {
            in.next();
            push(c != ':');
            out.append("(?").append((char) c);
            return;
        }
        if (c == 'i' || c == 'm' || c == 's' || c == '-') {
            options();
            return;
        }
        throw in.refuse("\"(?" + (c < 0 ? "" : Character.toString(c)) + "\" is not supported (lookbehind, "
                + "named, atomic and conditional groups, recursion, comments and inline x are refused)");
    }

    /** (?ims-ims) for the rest of the group, or (?ims-ims: ...) for a group of its own. */
    private void options() {
        boolean on = true;
        boolean any = false;
        boolean i = caseless;
        boolean m = multiline;
        boolean s = dotAll;
        while (true) {
            int c = in.next();
            if (c == ')' || c == ':') {
                if (!any) {
                    throw in.refuse("an empty option setting");
                }
                if (c == ':') {
                    push(false);
                    out.append("(?:");
                }
                caseless = i;
                multiline = m;
                dotAll = s;
                if (c == ')') {
                    repeatable = false;
                }
                return;
            }
            switch (c) {
                case '-' -> {
                    if (!on) {
                        throw in.refuse("two '-' in an option setting");
                    }
                    on = false;
                }
                case 'i' -> i = on;
                case 'm' -> m = on;
                case 's' -> s = on;
                default -> throw in.refuse("the inline option " + Character.toString(c) + " is not supported");
            }
            any |= c != '-';
        }
    }

    private void push(boolean assertion) {
        groups.push(new Group(caseless, multiline, dotAll, assertion));
        repeatable = false;
    }

    private void close() {
        if (groups.isEmpty()) {
            throw in.refuse("a ')' closes no group");
        }
        Group g = groups.pop();
        caseless = g.caseless();
        multiline = g.multiline();
        dotAll = g.dotAll();
        out.append(')');
        repeatable = !g.assertion();
    }
}
