package dev.fleproxy.rewrite.evaluate;

import org.bson.BsonValue;

/**
 * One operator's test of a single value (the server's matchesSingleElement): $eq, $gt, $in,
 * $type... A path predicate holds when the test holds for any value its path reaches.
 */
interface Leaf {
    /** Whether the value passes; null stands for a missing value. */
    boolean test(BsonValue value);

    /** What the path walk yields for an array at its end: the elements then the array, by default. */
    default PathValues.LeafArrays leafArrays() {
        return PathValues.LeafArrays.TRAVERSE;
    }
}
