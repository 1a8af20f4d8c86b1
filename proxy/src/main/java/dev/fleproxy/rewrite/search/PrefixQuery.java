package dev.fleproxy.rewrite.search;

import dev.fleproxy.crypto.PrefixTags;
import dev.fleproxy.policy.PrefixIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What the server is asked to match for one conjunct on a prefix-indexed field: the tag of the
 * literal start of a regex anchored at the beginning ({@code /^Smith/}, {@code {$regex: "^O\\.Br"}}),
 * so that only strings starting with it (folded as the index folds) come back as candidates; the
 * proxy still evaluates the regex exactly. A regex that is not read as one (no '^', an
 * alternation, the m or x option, a start shorter than the index's minLength, the i option on an
 * index without caseFold or with a start that is not ASCII) gets no condition.
 */
public final class PrefixQuery {
    private static final String META = ".[]()*+?{}|$^";

    private PrefixQuery() {
    }

    /** The server condition for {@code conjunct} under the tags of every opening key, or null. */
    public static BsonDocument condition(String field, BsonValue conjunct, PrefixIndex index, List<PrefixTags> underEveryKey) {
        String start = start(conjunct, index);
        if (start == null) {
            return null;
        }
        List<BsonValue> asked = new ArrayList<>();
        for (PrefixTags t : underEveryKey) {
            asked.add(SearchTags.tag(t.prefix(start)));
            asked.add(SearchTags.tag(t.other()));
        }
        asked.add(org.bson.BsonNull.VALUE); // untagged: written before the index
        return new BsonDocument(SearchTags.path(field), new BsonDocument("$in", new BsonArray(asked)));
    }

    /** The folded start whose tag a matching string carries, or null. */
    static String start(BsonValue conjunct, PrefixIndex index) {
        String pattern;
        String options;
        if (conjunct.isRegularExpression()) {
            pattern = conjunct.asRegularExpression().getPattern();
            options = conjunct.asRegularExpression().getOptions();
        } else if (conjunct.isDocument() && conjunct.asDocument().containsKey("$regex")) {
            BsonDocument d = conjunct.asDocument();
            BsonValue r = d.get("$regex");
            if (r.isRegularExpression()) {
                pattern = r.asRegularExpression().getPattern();
                options = r.asRegularExpression().getOptions();
            } else if (r.isString()) {
                pattern = r.asString().getValue();
                options = "";
            } else {
                return null;
            }
            BsonValue o = d.get("$options");
            if (o != null) {
                if (!o.isString()) {
                    return null;
                }
                options += o.asString().getValue();
            }
            for (Map.Entry<String, BsonValue> e : d.entrySet()) {
                if (!e.getKey().startsWith("$")) {
                    return null; // not an operator document
                }
            }
        } else {
            return null;
        }
        String literal = literal(pattern, options);
        if (literal == null) {
            return null;
        }
        if (options.indexOf('i') >= 0 && (!index.caseFold() || !literal.chars().allMatch(c -> c < 0x80))) {
            return null;
        }
        String folded = index.fold(literal);
        int codePoints = folded.codePointCount(0, folded.length());
        if (codePoints < index.minLength()) {
            return null;
        }
        return folded.substring(0, folded.offsetByCodePoints(0, Math.min(codePoints, index.maxLength())));
    }

    /** The literal every match starts with, from a pattern anchored by '^'; null if none is certain. */
    static String literal(String pattern, String options) {
        if (!pattern.startsWith("^") || pattern.indexOf('|') >= 0 || options.indexOf('m') >= 0
                || options.indexOf('x') >= 0) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        int i = 1;
        while (i < pattern.length()) {
            int c = pattern.codePointAt(i);
            int taken;
            int width;
            if (c == '\\') {
                if (i + 1 >= pattern.length()) {
                    break;
                }
                char n = pattern.charAt(i + 1);
                if (n >= 0x80 || Character.isLetterOrDigit(n) || Character.isWhitespace(n)) {
                    break; // \d, \w, \Q, \x41 …: not a literal the proxy reads
                }
                taken = n;
                width = 2;
            } else if (META.indexOf(c) >= 0) {
                break;
            } else {
                taken = c;
                width = Character.charCount(c);
            }
            int next = i + width;
            if (next < pattern.length() && "*?{".indexOf(pattern.charAt(next)) >= 0) {
                break; // this one may be absent or repeated: the literal ends before it
            }
            out.appendCodePoint(taken);
            i = next;
        }
        return out.length() == 0 ? null : out.toString();
    }
}
