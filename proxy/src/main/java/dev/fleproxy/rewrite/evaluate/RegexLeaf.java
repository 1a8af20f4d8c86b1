package dev.fleproxy.rewrite.evaluate;

import java.util.regex.Pattern;
import org.bson.BsonRegularExpression;
import org.bson.BsonValue;

/**
 * $regex (or a regular expression as the value): a string or symbol that the pattern finds a match
 * in, or a stored regular expression with the very same pattern and options
 * (RegexMatchExpression). The pattern is translated from PCRE2 by PcreTranslator, which refuses
 * what it cannot translate exactly; the options must be among i m s x u, as the server demands.
 */
final class RegexLeaf implements Leaf {
    private final String source;
    private final String options;
    private final Pattern pattern;

    private RegexLeaf(String source, String options) {
        this.source = source;
        this.options = options;
        this.pattern = PcreTranslator.translate(source, options);
    }

    static RegexLeaf of(String source, String options) {
        if (source.indexOf('\0') >= 0) {
            throw new NotEvaluable("$regex: a pattern cannot contain a null byte (the server refuses it)");
        }
        for (int i = 0; i < options.length(); i++) {
            if ("imsxu".indexOf(options.charAt(i)) < 0) {
                throw new NotEvaluable("$regex: invalid flag in regex options: " + options.charAt(i)
                        + " (the server refuses it)");
            }
        }
        return new RegexLeaf(source, options);
    }

    static RegexLeaf of(BsonRegularExpression regex) {
        return of(regex.getPattern(), regex.getOptions());
    }

    @Override
    public boolean test(BsonValue value) {
        if (value == null) {
            return false;
        }
        if (value.isString()) {
            return find(value.asString().getValue());
        }
        if (value.isSymbol()) {
            return find(value.asSymbol().getSymbol());
        }
        if (value.isRegularExpression()) {
            BsonRegularExpression r = value.asRegularExpression();
            return source.equals(r.getPattern()) && options.equals(r.getOptions());
        }
        return false;
    }

    private boolean find(String text) {
        try {
            return pattern.matcher(text).find();
        } catch (StackOverflowError deep) {
            // Java's engine recurses where PCRE2 would not, or would fail with its match limit
            throw new NotEvaluable("$regex /" + source + "/: Java's engine ran out of stack on a value");
        }
    }
}
