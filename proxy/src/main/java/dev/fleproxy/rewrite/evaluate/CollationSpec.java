package dev.fleproxy.rewrite.evaluate;

import com.ibm.icu.text.Collator;
import com.ibm.icu.text.RuleBasedCollator;
import com.ibm.icu.util.ULocale;
import java.util.Map;
import org.bson.BsonValue;

/**
 * A command's collation document (https://www.mongodb.com/docs/manual/reference/collation/) made
 * into the ICU collator MongoDB would compare strings with, for the queries the proxy evaluates.
 * Each setting maps to the RuleBasedCollator attribute mongod sets from it (collator_factory_icu):
 * strength 1-5 (primary … identical), caseLevel, caseFirst (upper, lower, off), numericOrdering,
 * alternate (non-ignorable, shifted), maxVariable (punct, space), backwards (French secondary
 * order), normalization (canonical decomposition). A setting left out keeps the locale's own
 * default, as in mongod (fr_CA compares accents backwards unless told otherwise).
 *
 * <p>The collator is frozen: immutable, so one evaluation may use it on the event loop and on the
 * evaluation pool. A document the server would reject is {@link Invalid}; a {@code version} is
 * refused too ({@link NotEvaluable}): it names the server's ICU build, which the proxy cannot check.
 */
public final class CollationSpec {
    /** MongoDB's locale for binary comparison: no collator. */
    public static final String SIMPLE = "simple";

    /** A collation document the server rejects (mongod answers such with BadValue). */
    public static final class Invalid extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message, null, false, false);
        }
    }

    private CollationSpec() {
    }

    /** True when the value asks for the simple collation: absent, or {locale: "simple"}. */
    public static boolean isSimple(BsonValue collation) {
        return collation == null || collation.isDocument() && collation.asDocument().size() == 1
                && collation.asDocument().isString("locale")
                && collation.asDocument().getString("locale").getValue().equals(SIMPLE);
    }

    /** The frozen collator for this collation document; null for the simple collation. */
    public static Collator collator(BsonValue collation) {
        if (collation == null) {
            return null;
        }
        if (!collation.isDocument()) {
            throw new Invalid("collation must be an object");
        }
        var spec = collation.asDocument();
        BsonValue locale = spec.get("locale");
        if (locale == null) {
            throw new Invalid("Missing required field 'locale' in collation " + shape(spec));
        }
        if (!locale.isString()) {
            throw new Invalid("Field 'locale' must be of type string in collation " + shape(spec));
        }
        String id = locale.asString().getValue();
        if (id.equals(SIMPLE)) {
            if (spec.size() > 1) {
                throw new Invalid("If locale=simple, no other fields should be present in collation " + shape(spec));
            }
            return null;
        }
        if (spec.containsKey("version")) {
            throw new NotEvaluable("a collation naming its ICU version (the proxy cannot check the server's)");
        }
        RuleBasedCollator c = (RuleBasedCollator) Collator.getInstance(locale(id, spec));
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            apply(c, e.getKey(), e.getValue(), spec);
        }
        return c.freeze();
    }

    /**
     * The ICU locale, or Invalid when ICU has no collation for it: a locale ICU cannot place falls
     * back to the root collation, which mongod accepts only when asked for by name.
     */
    private static ULocale locale(String id, org.bson.BsonDocument spec) {
        if (id.isEmpty()) {
            throw new Invalid("Field 'locale' cannot be the empty string in collation " + shape(spec));
        }
        ULocale requested = new ULocale(id);
        Collator probe = Collator.getInstance(requested);
        ULocale valid = probe.getLocale(ULocale.VALID_LOCALE);
        boolean root = valid == null || valid.equals(ULocale.ROOT) || valid.getName().equals("root");
        if (root && !id.equals("root")) {
            throw new Invalid("Field 'locale' is invalid in collation " + shape(spec));
        }
        return requested;
    }

    private static void apply(RuleBasedCollator c, String name, BsonValue v, org.bson.BsonDocument spec) {
        switch (name) {
            case "locale" -> {
                // read already
            }
            case "strength" -> c.setStrength(strength(v, spec));
            case "caseLevel" -> c.setCaseLevel(bool(name, v, spec));
            case "numericOrdering" -> c.setNumericCollation(bool(name, v, spec));
            case "backwards" -> c.setFrenchCollation(bool(name, v, spec));
            case "normalization" -> c.setDecomposition(bool(name, v, spec) ? Collator.CANONICAL_DECOMPOSITION
                    : Collator.NO_DECOMPOSITION);
            case "caseFirst" -> {
                switch (text(name, v, spec)) {
                    case "upper" -> c.setUpperCaseFirst(true);
                    case "lower" -> c.setLowerCaseFirst(true);
                    case "off" -> {
                        c.setUpperCaseFirst(false);
                        c.setLowerCaseFirst(false);
                    }
                    default -> throw new Invalid("Field 'caseFirst' must be 'upper', 'lower' or 'off' in collation "
                            + shape(spec));
                }
            }
            case "alternate" -> {
                switch (text(name, v, spec)) {
                    case "non-ignorable" -> c.setAlternateHandlingShifted(false);
                    case "shifted" -> c.setAlternateHandlingShifted(true);
                    default -> throw new Invalid("Field 'alternate' must be 'non-ignorable' or 'shifted' in collation "
                            + shape(spec));
                }
            }
            case "maxVariable" -> {
                switch (text(name, v, spec)) {
                    case "punct" -> c.setMaxVariable(Collator.ReorderCodes.PUNCTUATION);
                    case "space" -> c.setMaxVariable(Collator.ReorderCodes.SPACE);
                    default -> throw new Invalid("Field 'maxVariable' must be 'punct' or 'space' in collation "
                            + shape(spec));
                }
            }
            default -> throw new Invalid("Unknown collation field '" + name + "'");
        }
    }

    /** 1 to 5 as any number holding exactly that value: primary, secondary, tertiary, quaternary, identical. */
    private static int strength(BsonValue v, org.bson.BsonDocument spec) {
        if (!BsonNumbers.isNumber(v)) {
            throw new Invalid("Field 'strength' must be of numeric type in collation " + shape(spec));
        }
        Long n = BsonNumbers.exactLong(v);
        if (n == null || n < 1 || n > 5) {
            throw new Invalid("Field 'strength' must be an integer 1 through 5 in collation " + shape(spec));
        }
        return switch (n.intValue()) {
            case 1 -> Collator.PRIMARY;
            case 2 -> Collator.SECONDARY;
            case 3 -> Collator.TERTIARY;
            case 4 -> Collator.QUATERNARY;
            default -> Collator.IDENTICAL;
        };
    }

    private static boolean bool(String name, BsonValue v, org.bson.BsonDocument spec) {
        if (!v.isBoolean()) {
            throw new Invalid("Field '" + name + "' must be of type bool in collation " + shape(spec));
        }
        return v.asBoolean().getValue();
    }

    private static String text(String name, BsonValue v, org.bson.BsonDocument spec) {
        if (!v.isString()) {
            throw new Invalid("Field '" + name + "' must be of type string in collation " + shape(spec));
        }
        return v.asString().getValue();
    }

    /** The document's field names only: the proxy's messages never repeat a value of the command. */
    private static String shape(org.bson.BsonDocument spec) {
        return spec.keySet().toString();
    }
}
