package dev.fleproxy.rewrite.evaluate;

import com.ibm.icu.text.Collator;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * How strings compare while the proxy evaluates one query: by their UTF-8 bytes (the simple
 * collation) or by the query's collation. The collation is scoped to the evaluation on its thread
 * rather than passed down, so that every comparison the evaluator makes through {@link BsonOrder}
 * (filters, sorts, $group keys, $addToSet, $min/$max, distinct, expressions) follows it without each
 * compiled step carrying it; outside {@link #under} strings compare by bytes, as before.
 */
public final class StringOrder {
    private static final ThreadLocal<Collator> CURRENT = new ThreadLocal<>();

    private StringOrder() {
    }

    /**
     * Runs work with strings compared by this collator (null: by bytes); the thread's previous
     * order is restored after, whatever happens. The collator must be frozen: a query's evaluation
     * may move between the event loop and the evaluation pool.
     */
    public static <T> T under(Collator collator, Supplier<T> work) {
        if (collator == null) {
            return work.get();
        }
        if (!collator.isFrozen()) {
            throw new IllegalArgumentException("a collator shared by an evaluation must be frozen");
        }
        Collator before = CURRENT.get();
        CURRENT.set(collator);
        try {
            return work.get();
        } finally {
            if (before == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(before);
            }
        }
    }

    /** Negative, zero or positive as a sorts before, with or after b under the current order. */
    static int compare(String a, String b) {
        Collator c = CURRENT.get();
        return c == null ? bytes(a, b) : c.compare(a, b);
    }

    /** Strings as the simple collation compares them: their UTF-8 bytes, unsigned. */
    static int bytes(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}
