package dev.fleproxy.rewrite.evaluate;

import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A compiled filter, node by node as the server's MatchExpression tree: each node evaluates a
 * whole document, or one value (the operators inside {$elemMatch: {$gt: ...}} and under $not
 * there test array elements one by one).
 */
interface FilterNode {
    boolean matches(BsonDocument doc);

    /** The node on one value (null: missing), for $elemMatch's value form. */
    boolean matchesValue(BsonValue value);

    /**
     * Adds the top-level fields the node reads to {@code into}; false if it may read any part of
     * the document (a node that does not say reads it all).
     */
    default boolean fieldsRead(Set<String> into) {
        return false;
    }

    /** Every child's fields; false if one of them may read any. */
    static boolean fieldsRead(List<FilterNode> children, Set<String> into) {
        for (FilterNode c : children) {
            if (!c.fieldsRead(into)) {
                return false;
            }
        }
        return true;
    }

    /** A leaf on a path: true when the leaf holds for any value the path reaches. */
    record OnPath(String[] path, Leaf leaf) implements FilterNode {
        @Override
        public boolean matches(BsonDocument doc) {
            return PathValues.any(doc, path, leaf.leafArrays(), leaf::test);
        }

        @Override
        public boolean matchesValue(BsonValue value) {
            return leaf.test(value);
        }

        @Override
        public boolean fieldsRead(Set<String> into) {
            into.add(path[0]); // an $elemMatch's operators read within the array the path reaches
            return true;
        }
    }

    record And(List<FilterNode> children) implements FilterNode {
        @Override
        public boolean matches(BsonDocument doc) {
            return children.stream().allMatch(c -> c.matches(doc));
        }

        @Override
        public boolean matchesValue(BsonValue value) {
            return children.stream().allMatch(c -> c.matchesValue(value));
        }

        @Override
        public boolean fieldsRead(Set<String> into) {
            return FilterNode.fieldsRead(children, into);
        }
    }

    record Or(List<FilterNode> children) implements FilterNode {
        @Override
        public boolean matches(BsonDocument doc) {
            return children.stream().anyMatch(c -> c.matches(doc));
        }

        @Override
        public boolean matchesValue(BsonValue value) {
            return children.stream().anyMatch(c -> c.matchesValue(value));
        }

        @Override
        public boolean fieldsRead(Set<String> into) {
            return FilterNode.fieldsRead(children, into);
        }
    }

    record Nor(List<FilterNode> children) implements FilterNode {
        @Override
        public boolean matches(BsonDocument doc) {
            return children.stream().noneMatch(c -> c.matches(doc));
        }

        @Override
        public boolean matchesValue(BsonValue value) {
            return children.stream().noneMatch(c -> c.matchesValue(value));
        }

        @Override
        public boolean fieldsRead(Set<String> into) {
            return FilterNode.fieldsRead(children, into);
        }
    }

    /**
     * Negation of the whole child: $ne, $nin, $not and {$exists: false} negate the predicate on the
     * path, so {a: {$ne: 1}} rejects a document where any element of a equals 1.
     */
    record Not(FilterNode child) implements FilterNode {
        @Override
        public boolean matches(BsonDocument doc) {
            return !child.matches(doc);
        }

        @Override
        public boolean matchesValue(BsonValue value) {
            return !child.matchesValue(value);
        }

        @Override
        public boolean fieldsRead(Set<String> into) {
            return child.fieldsRead(into);
        }
    }

    /** $alwaysTrue, $alwaysFalse, and $all of nothing (which matches nothing). */
    record Constant(boolean value) implements FilterNode {
        @Override
        public boolean matches(BsonDocument doc) {
            return value;
        }

        @Override
        public boolean matchesValue(BsonValue ignored) {
            return value;
        }

        @Override
        public boolean fieldsRead(Set<String> into) {
            return true;
        }
    }
}
