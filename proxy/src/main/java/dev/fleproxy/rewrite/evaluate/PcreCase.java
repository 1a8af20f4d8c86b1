package dev.fleproxy.rewrite.evaluate;

/**
 * Literal characters of a translated pattern, and what PCRE2 matches for them under the i flag.
 * MongoDB compiles patterns in UTF mode without UCP: caseless matching of a character matches its
 * Unicode case set, which for ASCII letters is the letter's two cases, plus U+212A (Kelvin sign)
 * for k and U+017F (long s) for s. Java's own case folding differs from PCRE2's outside ASCII
 * (dotted and dotless i, for one), so the translation spells the sets out itself and refuses a
 * non-ASCII character that has or may have case under i.
 */
final class PcreCase {
    private PcreCase() {
    }

    /** A literal code point as a Java pattern item outside classes: the caseless set under i. */
    static String literal(int c, boolean caseless, PcreCursor where) {
        int[] set = caseless ? caselessSet(c, where) : null;
        if (set == null) {
            return escaped(c);
        }
        StringBuilder sb = new StringBuilder("[");
        for (int member : set) {
            sb.append(escaped(member));
        }
        return sb.append(']').toString();
    }

    /** The other members of c's caseless set (c excluded), appended to a class body under i. */
    static void appendOtherCases(StringBuilder classBody, int c, PcreCursor where) {
        int[] set = caselessSet(c, where);
        if (set != null) {
            for (int member : set) {
                if (member != c) {
                    classBody.append(escaped(member));
                }
            }
        }
    }

    /**
     * PCRE2's caseless set of c, or null when c has no other case; refuses a non-ASCII character
     * with case (or unknown to this JDK's Unicode tables), whose set this translation does not know.
     */
    static int[] caselessSet(int c, PcreCursor where) {
        if (c < 128) {
            if (!Character.isLetter(c)) {
                return null;
            }
            int lower = c | 0x20;
            int upper = c & ~0x20;
            if (lower == 'k') {
                return new int[] {'K', 'k', 0x212A};
            }
            if (lower == 's') {
                return new int[] {'S', 's', 0x017F};
            }
            return new int[] {upper, lower};
        }
        boolean cased = Character.isLetter(c) || Character.toLowerCase(c) != c || Character.toUpperCase(c) != c
                || Character.toTitleCase(c) != c || Character.getType(c) == Character.UNASSIGNED;
        if (cased) {
            throw where.refuse(String.format("under the i option the non-ASCII character U+%04X has case, and "
                    + "PCRE2's caseless matching of it may differ from Java's", c));
        }
        return null;
    }

    /** c as one Java pattern item matching exactly c: ASCII letters and digits as they are, else \x{...}. */
    static String escaped(int c) {
        boolean alnum = c < 128 && Character.isLetterOrDigit(c);
        return alnum ? Character.toString(c) : String.format("\\x{%X}", c);
    }
}
