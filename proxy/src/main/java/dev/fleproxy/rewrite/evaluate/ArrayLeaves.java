package dev.fleproxy.rewrite.evaluate;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The operators that test an array as a whole ($size, both forms of $elemMatch): the path walk
 * hands them an array at its end as it is, not element by element, and anything else fails.
 */
final class ArrayLeaves {
    private ArrayLeaves() {
    }

    /** $size: an array of exactly n elements. */
    record Size(int n) implements Leaf {
        @Override
        public boolean test(BsonValue value) {
            return value != null && value.isArray() && value.asArray().size() == n;
        }

        @Override
        public PathValues.LeafArrays leafArrays() {
            return PathValues.LeafArrays.NO_TRAVERSAL;
        }
    }

    /**
     * $elemMatch on documents ({$elemMatch: {b: 1, c: {$gt: 2}}}): some element satisfies the whole
     * sub-filter at once, unlike {"a.b": 1, "a.c": {$gt: 2}}, whose conditions may hold on
     * different elements. An element that is itself an array is read as a document whose field
     * names are its indexes, as the server reads it; scalars never match.
     */
    record ElemMatchObject(FilterNode sub) implements ElemMatch {
        @Override
        public boolean matchesElement(BsonValue element) {
            return element.isDocument() && sub.matches(element.asDocument())
                    || element.isArray() && sub.matches(indexed(element.asArray()));
        }
    }

    /**
     * $elemMatch on values ({$elemMatch: {$gte: 80, $lt: 85}}): some element passes every operator,
     * each testing the element itself (a nested array is one value here, never walked into).
     */
    record ElemMatchValue(List<FilterNode> operators) implements ElemMatch {
        @Override
        public boolean matchesElement(BsonValue element) {
            return operators.stream().allMatch(o -> o.matchesValue(element));
        }
    }

    /** Both forms of $elemMatch: an array with an element that matches. */
    interface ElemMatch extends Leaf {
        boolean matchesElement(BsonValue element);

        @Override
        default boolean test(BsonValue value) {
            return value != null && value.isArray() && firstMatch(value.asArray()) >= 0;
        }

        /** The index of the first element that matches, or -1 (the $elemMatch projection keeps it). */
        default int firstMatch(BsonArray array) {
            for (int i = 0; i < array.size(); i++) {
                if (matchesElement(array.get(i))) {
                    return i;
                }
            }
            return -1;
        }

        @Override
        default PathValues.LeafArrays leafArrays() {
            return PathValues.LeafArrays.NO_TRAVERSAL;
        }
    }

    /** An array as the document the server sees in its bytes: fields "0", "1", ... */
    static BsonDocument indexed(BsonArray array) {
        BsonDocument doc = new BsonDocument();
        for (int i = 0; i < array.size(); i++) {
            doc.append(Integer.toString(i), array.get(i));
        }
        return doc;
    }
}
