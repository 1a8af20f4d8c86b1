package dev.fleproxy.policy;

import dev.fleproxy.crypto.TextTags.Kind;
import java.text.Normalizer;

/**
 * An opt-in text index on one encrypted field (docs/query-model.md#text-indexes), of one kind:
 * <ul>
 * <li>{@link Kind#PREFIX}: each string stored carries one tag per prefix of {@code minLength} to
 * {@code maxLength} code points, after folding; a regex anchored at the start with a literal start
 * asks for that start's tag;</li>
 * <li>{@link Kind#SUFFIX}: the same for suffixes and a regex anchored at the end;</li>
 * <li>{@link Kind#SUBSTRING}: one tag per distinct run of {@code minLength} code points (an n-gram,
 * n = {@code minLength}) of a string of at most {@code maxLength} code points; a regex with a literal
 * run of n or more code points anywhere asks for all its n-grams.</li>
 * </ul>
 * Folding works code point by code point, so a string that holds a literal still holds it once
 * both are folded: {@code caseFold} maps a code point to the lower case of its upper case (so K, k
 * and the Kelvin sign fold alike); {@code diacriticFold} drops the combining marks of its
 * canonical decomposition (é to e).
 */
public record TextIndex(Kind kind, int minLength, int maxLength, boolean caseFold, boolean diacriticFold) {
    public TextIndex {
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
