package dev.fleproxy.rewrite.evaluate;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * MongoDB's comparison order of BSON values: by type class first (MinKey,
 * undefined, null, numbers, strings, documents, arrays, binaries, ObjectIds, booleans, dates,
 * timestamps, regular expressions, DBPointers, code, code with scope, MaxKey), then within it;
 * numbers compare by value whatever their type; strings (and symbols) by their bytes, or by the
 * collation of the query being evaluated ({@link StringOrder}). The server returns distinct's values in this
 * order; after decrypting them the proxy must sort them again, since the server ordered their
 * envelopes. The evaluator (DocumentFilter, DocumentSort) compares values the same way.
 */
public final class BsonOrder {
    public static final Comparator<BsonValue> COMPARATOR = BsonOrder::compare;

    private BsonOrder() {
    }

    /**
     * The server's canonical rank of a type (bsontypes.h, canonicalizeBSONType): values compare
     * only within one rank (type bracketing). A missing value ranks 0 like undefined.
     */
    public static int rank(BsonType t) {
        return switch (t) {
            case MIN_KEY -> -1;
            case END_OF_DOCUMENT, UNDEFINED -> 0; // below null: the server's order, not null's rank
            case NULL -> 5;
            case DOUBLE, INT32, INT64, DECIMAL128 -> 10;
            case STRING, SYMBOL -> 15;
            case DOCUMENT -> 20;
            case ARRAY -> 25;
            case BINARY -> 30;
            case OBJECT_ID -> 35;
            case BOOLEAN -> 40;
            case DATE_TIME -> 45;
            case TIMESTAMP -> 47;
            case REGULAR_EXPRESSION -> 50;
            case DB_POINTER -> 55;
            case JAVASCRIPT -> 60;
            case JAVASCRIPT_WITH_SCOPE -> 65;
            case MAX_KEY -> 127;
            default -> 0;
        };
    }

    /** Negative, zero or positive as a sorts before, with or after b. */
    public static int compare(BsonValue a, BsonValue b) {
        int byRank = Integer.compare(rank(a.getBsonType()), rank(b.getBsonType()));
        if (byRank != 0) {
            return byRank;
        }
        return switch (rank(a.getBsonType())) {
            case 10 -> numbers(a, b);
            case 15 -> StringOrder.compare(text(a), text(b)); // the query's collation, if any
            case 20 -> documents(a.asDocument(), b.asDocument());
            case 25 -> elements(a.asArray().getValues(), b.asArray().getValues());
            case 30 -> binaries(a.asBinary(), b.asBinary());
            case 35 -> a.asObjectId().getValue().compareTo(b.asObjectId().getValue());
            case 40 -> Boolean.compare(a.asBoolean().getValue(), b.asBoolean().getValue());
            case 45 -> Long.compare(a.asDateTime().getValue(), b.asDateTime().getValue());
            case 47 -> Long.compareUnsigned(a.asTimestamp().getValue(), b.asTimestamp().getValue());
            case 50 -> {
                int p = bytes(a.asRegularExpression().getPattern(), b.asRegularExpression().getPattern());
                yield p != 0 ? p : bytes(a.asRegularExpression().getOptions(), b.asRegularExpression().getOptions());
            }
            case 55 -> {
                int n = bytes(a.asDBPointer().getNamespace(), b.asDBPointer().getNamespace());
                yield n != 0 ? n : a.asDBPointer().getId().compareTo(b.asDBPointer().getId());
            }
            case 60 -> bytes(a.asJavaScript().getCode(), b.asJavaScript().getCode());
            case 65 -> {
                int c = bytes(a.asJavaScriptWithScope().getCode(), b.asJavaScriptWithScope().getCode());
                yield c != 0 ? c : documents(a.asJavaScriptWithScope().getScope(), b.asJavaScriptWithScope().getScope());
            }
            default -> 0; // MinKey, undefined, null, MaxKey: one value each
        };
    }

    private static String text(BsonValue v) {
        return v.isSymbol() ? v.asSymbol().getSymbol() : v.asString().getValue();
    }

    /** Numbers by value, whatever their type. */
    private static int numbers(BsonValue a, BsonValue b) {
        if ((a.isInt32() || a.isInt64()) && (b.isInt32() || b.isInt64())) {
            return Long.compare(a.asNumber().longValue(), b.asNumber().longValue());
        }
        boolean nanA = isNaN(a);
        boolean nanB = isNaN(b);
        if (nanA || nanB) {
            return Boolean.compare(nanB, nanA); // NaN below every other number, as the server orders it
        }
        BigDecimal x = exact(a);
        BigDecimal y = exact(b);
        if (x != null && y != null) {
            return x.compareTo(y);
        }
        return Double.compare(infinite(a), infinite(b)); // an infinity against anything: its sign decides
    }

    private static boolean isNaN(BsonValue v) {
        return v.isDecimal128() ? v.asDecimal128().getValue().isNaN() : v.isDouble() && Double.isNaN(v.asDouble().getValue());
    }

    /** The exact value of a finite number, null for NaN and infinities. */
    private static BigDecimal exact(BsonValue v) {
        if (v.isDecimal128()) {
            Decimal128 d = v.asDecimal128().getValue();
            return d.isFinite() ? decimal(d) : null;
        }
        if (v.isDouble()) {
            double d = v.asDouble().getValue();
            return Double.isFinite(d) ? new BigDecimal(d) : null;
        }
        return BigDecimal.valueOf(v.asNumber().longValue());
    }

    /** A finite Decimal128's value; the driver refuses to convert -0, which equals 0. */
    static BigDecimal decimal(Decimal128 d) {
        try {
            return d.bigDecimalValue();
        } catch (ArithmeticException negativeZero) {
            return BigDecimal.ZERO;
        }
    }

    /** A number's value where it is infinite, else 0 (compared only with an infinity). */
    private static double infinite(BsonValue v) {
        BigDecimal exact = exact(v);
        if (exact != null) {
            return 0;
        }
        boolean negative = v.isDecimal128() ? v.asDecimal128().getValue().isNegative() : v.asDouble().getValue() < 0;
        return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }

    /** Field names, regex patterns, code: their UTF-8 bytes, whatever the collation (it covers string values only). */
    private static int bytes(String a, String b) {
        return StringOrder.bytes(a, b);
    }

    private static int binaries(BsonBinary a, BsonBinary b) {
        int len = Integer.compare(a.getData().length, b.getData().length);
        if (len != 0) {
            return len;
        }
        int type = Integer.compare(a.getType() & 0xff, b.getType() & 0xff);
        return type != 0 ? type : Arrays.compareUnsigned(a.getData(), b.getData());
    }

    /** Element by element: type, then name, then value; the shorter first when one is a prefix. */
    private static int documents(BsonDocument a, BsonDocument b) {
        Iterator<Map.Entry<String, BsonValue>> x = a.entrySet().iterator();
        Iterator<Map.Entry<String, BsonValue>> y = b.entrySet().iterator();
        while (x.hasNext() && y.hasNext()) {
            Map.Entry<String, BsonValue> e = x.next();
            Map.Entry<String, BsonValue> f = y.next();
            int c = Integer.compare(rank(e.getValue().getBsonType()), rank(f.getValue().getBsonType()));
            if (c == 0) {
                c = bytes(e.getKey(), f.getKey());
            }
            if (c == 0) {
                c = compare(e.getValue(), f.getValue());
            }
            if (c != 0) {
                return c;
            }
        }
        return Boolean.compare(x.hasNext(), y.hasNext());
    }

    private static int elements(List<BsonValue> a, List<BsonValue> b) {
        for (int i = 0; i < a.size() && i < b.size(); i++) {
            int c = Integer.compare(rank(a.get(i).getBsonType()), rank(b.get(i).getBsonType()));
            if (c == 0) {
                c = compare(a.get(i), b.get(i));
            }
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }
}
