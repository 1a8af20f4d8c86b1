package dev.fleproxy.rewrite.search;

import dev.fleproxy.crypto.TextTags;
import dev.fleproxy.policy.TextIndex;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * What the server is asked to match for one regex conjunct on a field with a text index, so that
 * only strings that may match (folded as the index folds) come back as candidates; the proxy still
 * evaluates the regex exactly. From what every match must hold ({@link RegexLiterals}):
 * <ul>
 * <li>a prefix index: the tag of the literal start of a regex anchored by '^' ({@code /^Smith/});</li>
 * <li>a suffix index: the tag of the literal end of a regex anchored by '$' ({@code /son$/});</li>
 * <li>a substring index: every n-gram of its literal runs of n or more code points
 * ({@code /mit/}, {@code /o.Br/} with n = 2), up to {@link #MAX_GRAMS}: a document must hold them all.</li>
 * </ul>
 * A regex that gives its index nothing (not read, too short a literal, the i option on an index
 * without caseFold or with a literal that is not ASCII) gets no condition.
 */
public final class TextQuery {
    /** The most n-grams a substring query asks for: enough to narrow, a bounded query. */
    static final int MAX_GRAMS = 16;

    private TextQuery() {
    }

    /** The server condition for {@code conjunct} under the tags of every opening key, or null. */
    public static BsonDocument condition(String field, BsonValue conjunct, TextIndex index, List<TextTags> underEveryKey) {
        List<String> pieces = pieces(conjunct, index);
        if (pieces == null) {
            return null;
        }
        String path = SearchTags.path(field);
        List<BsonValue> always = new ArrayList<>();
        underEveryKey.forEach(t -> always.add(SearchTags.tag(t.other())));
        always.add(BsonNull.VALUE); // untagged: written before the index
        if (index.kind() != TextTags.Kind.SUBSTRING) {
            List<BsonValue> asked = new ArrayList<>();
            underEveryKey.forEach(t -> asked.add(SearchTags.tag(t.text(pieces.get(0)))));
            asked.addAll(always);
            return new BsonDocument(path, new BsonDocument("$in", new BsonArray(asked)));
        }
        // a document sealed under one key holds all the n-grams under that key
        BsonArray any = new BsonArray();
        for (TextTags t : underEveryKey) {
            BsonArray all = new BsonArray();
            pieces.forEach(p -> all.add(SearchTags.tag(t.text(p))));
            any.add(new BsonDocument(path, new BsonDocument("$all", all)));
        }
        any.add(new BsonDocument(path, new BsonDocument("$in", new BsonArray(always))));
        return new BsonDocument("$or", any);
    }

    /** The folded pieces whose tags a matching string carries (one for a prefix or suffix), or null. */
    static List<String> pieces(BsonValue conjunct, TextIndex index) {
        String[] regex = regex(conjunct);
        if (regex == null) {
            return null;
        }
        RegexLiterals read = RegexLiterals.of(regex[0], regex[1]);
        if (read == null) {
            return null;
        }
        boolean caseless = regex[1].indexOf('i') >= 0;
        switch (index.kind()) {
            case PREFIX, SUFFIX -> {
                String literal = index.kind() == TextTags.Kind.PREFIX ? read.start() : read.end();
                String folded = usable(literal, caseless, index);
                if (folded == null) {
                    return null;
                }
                int n = folded.codePointCount(0, folded.length());
                if (n < index.minLength()) {
                    return null;
                }
                int k = Math.min(n, index.maxLength());
                return List.of(index.kind() == TextTags.Kind.PREFIX
                        ? folded.substring(0, folded.offsetByCodePoints(0, k))
                        : folded.substring(folded.offsetByCodePoints(folded.length(), -k)));
            }
            default -> {
                Set<String> grams = new LinkedHashSet<>();
                // the longest runs first: their n-grams are the rarest
                List<RegexLiterals.Run> runs = new ArrayList<>(read.runs());
                runs.sort((a, b) -> Integer.compare(b.text().length(), a.text().length()));
                for (RegexLiterals.Run run : runs) {
                    String folded = usable(run.text(), caseless, index);
                    if (folded == null) {
                        continue; // a caseless run the index cannot fold: the others still narrow
                    }
                    int n = folded.codePointCount(0, folded.length());
                    for (int k = 0; k + index.minLength() <= n && grams.size() < MAX_GRAMS; k++) {
                        int from = folded.offsetByCodePoints(0, k);
                        grams.add(folded.substring(from, folded.offsetByCodePoints(from, index.minLength())));
                    }
                }
                return grams.isEmpty() ? null : List.copyOf(grams);
            }
        }
    }

    /** The literal folded as the index folds, or null if it is none or the i option forbids it. */
    private static String usable(String literal, boolean caseless, TextIndex index) {
        if (literal == null) {
            return null;
        }
        if (caseless && (!index.caseFold() || !literal.chars().allMatch(c -> c < 0x80))) {
            return null;
        }
        return index.fold(literal);
    }

    /** The pattern and options of a regex conjunct ({@code /re/o}, {@code {$regex: …, $options: …}}), or null. */
    static String[] regex(BsonValue conjunct) {
        if (conjunct.isRegularExpression()) {
            return new String[] {conjunct.asRegularExpression().getPattern(), conjunct.asRegularExpression().getOptions()};
        }
        if (!conjunct.isDocument() || !conjunct.asDocument().containsKey("$regex")) {
            return null;
        }
        BsonDocument d = conjunct.asDocument();
        String pattern;
        String options;
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
        return new String[] {pattern, options};
    }
}
