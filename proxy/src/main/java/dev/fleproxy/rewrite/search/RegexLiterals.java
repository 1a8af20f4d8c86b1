package dev.fleproxy.rewrite.search;

import java.util.ArrayList;
import java.util.List;

/**
 * What every string a regex matches must hold, as far as the proxy reads regexes: the runs of
 * literal code points that stand, unquantified, in the pattern's one branch, and whether the
 * pattern is anchored at its start and at its end. A pattern the proxy does not read so (an
 * alternation, a group, the m or x option, an escape it does not know, an unfinished class) gives
 * null: its query gets no condition from a text index, and is evaluated as without one.
 */
record RegexLiterals(boolean startAnchored, boolean endAnchored, List<Run> runs) {
    /**
     * Literal code points that stand one after another in every match; {@code first}/{@code last}:
     * whether the run starts the pattern (after '^') or ends it (before '$').
     */
    record Run(String text, boolean first, boolean last) {
    }

    private static final String META = ".[]()*+?{}|$^";
    /** Escapes of one letter that are one atom each (classes, anchors, control characters). */
    private static final String ATOMS = "dDwWsShHvVRbBAzZGnrtfeaX";

    /** The pattern read, or null if it is not read (see the class). */
    static RegexLiterals of(String pattern, String options) {
        if (pattern.indexOf('|') >= 0 || options.indexOf('m') >= 0 || options.indexOf('x') >= 0
                || pattern.indexOf('(') >= 0) {
            return null; // '(' might even be an escaped one: refusing it too is only less reading
        }
        boolean start = pattern.startsWith("^");
        List<Run> runs = new ArrayList<>();
        StringBuilder run = new StringBuilder();
        boolean runIsFirst = start;
        boolean end = false;
        int i = start ? 1 : 0;
        while (i < pattern.length()) {
            int c = pattern.codePointAt(i);
            Integer literal = null; // the code point this atom matches, if it is one literal
            int next;
            if (c == '\\') {
                if (i + 1 >= pattern.length()) {
                    return null;
                }
                char n = pattern.charAt(i + 1);
                if (n >= 0x80 || Character.isLetterOrDigit(n) || Character.isWhitespace(n)) {
                    // \d, \w, \b, \n …: one atom that is no literal the proxy reads; an escape that
                    // takes more (\x41, \p{L}, \Q…\E, \1 …) is not read at all
                    if (ATOMS.indexOf(n) < 0) {
                        return null;
                    }
                    next = i + 2;
                } else {
                    literal = (int) n;
                    next = i + 2;
                }
            } else if (c == '[') {
                next = classEnd(pattern, i);
                if (next < 0) {
                    return null;
                }
            } else if (c == '$' && i == pattern.length() - 1) {
                end = true; // the anchor: the run before it, if any, is the last
                break;
            } else if (c == '{' || c == '*' || c == '+' || c == '?') {
                return null; // a quantifier with nothing before it to quantify, read below otherwise
            } else if (META.indexOf(c) >= 0) {
                next = i + 1; // '.', a '^' or '$' that is not an anchor here, ']', '}'
            } else {
                literal = c;
                next = i + Character.charCount(c);
            }
            // a quantifier after the atom: it may be absent or repeated, so it ends the run
            boolean quantified = false;
            boolean once = false; // '+': at least once, so the run may take it, then ends
            if (next < pattern.length() && "*+?{".indexOf(pattern.charAt(next)) >= 0) {
                quantified = true;
                once = pattern.charAt(next) == '+';
                next = quantifierEnd(pattern, next);
                if (next < 0) {
                    return null;
                }
            }
            if (literal != null && !quantified) {
                run.appendCodePoint(literal);
            } else {
                if (literal != null && once) {
                    run.appendCodePoint(literal);
                }
                if (run.length() > 0) {
                    runs.add(new Run(run.toString(), runIsFirst, false));
                    run.setLength(0);
                }
                runIsFirst = false;
            }
            i = next;
        }
        if (run.length() > 0) {
            runs.add(new Run(run.toString(), runIsFirst, end));
        }
        return new RegexLiterals(start, end, runs);
    }

    /** Where the class opened at i ends (the index after its ']'), or -1 if it does not. */
    private static int classEnd(String p, int i) {
        int j = i + 1;
        if (j < p.length() && p.charAt(j) == '^') {
            j++;
        }
        if (j < p.length() && p.charAt(j) == ']') {
            j++; // a ']' first is one of the class's
        }
        while (j < p.length()) {
            char c = p.charAt(j);
            if (c == '\\') {
                j += 2;
            } else if (c == '[' && j + 1 < p.length() && p.charAt(j + 1) == ':') {
                return -1; // a POSIX class: not read
            } else if (c == ']') {
                return j + 1;
            } else {
                j++;
            }
        }
        return -1;
    }

    /** Where the quantifier at i ends (past a lazy '?' or possessive '+'), or -1 for a '{' not read. */
    private static int quantifierEnd(String p, int i) {
        int j = i;
        if (p.charAt(j) == '{') {
            int close = p.indexOf('}', j);
            if (close < 0 || !p.substring(j + 1, close).matches("\\d+(,\\d*)?|,\\d+")) {
                return -1; // a '{' PCRE may read as a literal: not read
            }
            j = close + 1;
        } else {
            j++;
        }
        if (j < p.length() && (p.charAt(j) == '?' || p.charAt(j) == '+')) {
            j++;
        }
        if (j < p.length() && "*+?{".indexOf(p.charAt(j)) >= 0) {
            return -1; // a quantifier quantified: not read
        }
        return j;
    }

    /** The literal every match starts with (the run right after '^'), or null. */
    String start() {
        return startAnchored && !runs.isEmpty() && runs.get(0).first() ? runs.get(0).text() : null;
    }

    /** The literal every match ends with (the run right before '$'), or null. */
    String end() {
        return endAnchored && !runs.isEmpty() && runs.get(runs.size() - 1).last() ? runs.get(runs.size() - 1).text() : null;
    }
}
