package dev.fleproxy.policy;

import java.text.Normalizer;

/**
 * An opt-in prefix index on one encrypted field (docs/query-model.md#prefix-indexes): each string
 * stored carries one tag per prefix of {@code minLength} to {@code maxLength} code points, after
 * folding; an anchored regex with a literal start asks for its start's tag. Folding works code
 * point by code point, so a string that starts with a literal still starts with it once both are
 * folded: {@code caseFold} maps a code point to the lower case of its upper case (so K, k and the
 * Kelvin sign fold alike); {@code diacriticFold} drops the combining marks of its canonical
 * decomposition (é to e).
 */
public record PrefixIndex(int minLength, int maxLength, boolean caseFold, boolean diacriticFold) {
    public PrefixIndex {
        if (minLength < 1 || maxLength < minLength) {
            throw new IllegalArgumentException("1 <= minLength <= maxLength");
        }
    }

    /** The string folded as the index folds it. */
    public String fold(String s) {
        if (!caseFold && !diacriticFold) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length());
        s.codePoints().forEach(cp -> {
            String one = new String(Character.toChars(caseFold ? Character.toLowerCase(Character.toUpperCase(cp)) : cp));
            if (diacriticFold) {
                String d = Normalizer.normalize(one, Normalizer.Form.NFD);
                d.codePoints().filter(c -> Character.getType(c) != Character.NON_SPACING_MARK).forEach(out::appendCodePoint);
            } else {
                out.append(one);
            }
        });
        return out.toString();
    }
}
