package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Applying a projection tree to a document as find does (the server's projection executor with
 * find's policy of recursing into nested arrays). Values that pass through unchanged are the
 * input's own, not copies.
 */
final class Projections {
    private Projections() {
    }

    /**
     * Inclusion: the named fields, in the input's order. Under a dotted path, a document keeps only
     * what is named below (possibly nothing: {}), an array keeps each element projected the same way
     * (arrays in arrays too) and drops its scalars, and a scalar is dropped.
     */
    static BsonDocument include(ProjectionNode node, BsonDocument input) {
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : input.entrySet()) {
            ProjectionNode child = node.children.get(e.getKey());
            if (child == null) {
                continue;
            }
            if (child.kind == ProjectionNode.Kind.INCLUDE || child.kind == ProjectionNode.Kind.SLICE) {
                out.put(e.getKey(), e.getValue());
            } else if (child.kind == ProjectionNode.Kind.PATH) {
                BsonValue projected = includeValue(child, e.getValue());
                if (projected != null) {
                    out.put(e.getKey(), projected);
                }
            } // EXCLUDE is _id: 0; ELEM_MATCH fields are added afterwards
        }
        return out;
    }

    private static BsonValue includeValue(ProjectionNode node, BsonValue value) {
        if (value.isDocument()) {
            return include(node, value.asDocument());
        }
        if (!value.isArray()) {
            return null;
        }
        List<BsonValue> kept = new ArrayList<>();
        for (BsonValue element : value.asArray()) {
            BsonValue projected = includeValue(node, element);
            if (projected != null) {
                kept.add(projected);
            }
        }
        return new BsonArray(kept);
    }

    /**
     * Exclusion: every field but the named ones, in the input's order; under a dotted path,
     * documents lose the named fields, arrays have each element treated the same way (arrays in
     * arrays too) and scalars stay as they are.
     */
    static BsonDocument exclude(ProjectionNode node, BsonDocument input) {
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : input.entrySet()) {
            ProjectionNode child = node.children.get(e.getKey());
            if (child == null || child.kind == ProjectionNode.Kind.SLICE) {
                out.put(e.getKey(), e.getValue());
            } else if (child.kind == ProjectionNode.Kind.PATH) {
                out.put(e.getKey(), excludeValue(child, e.getValue()));
            } // EXCLUDE: dropped
        }
        return out;
    }

    private static BsonValue excludeValue(ProjectionNode node, BsonValue value) {
        if (value.isDocument()) {
            return exclude(node, value.asDocument());
        }
        if (!value.isArray()) {
            return value;
        }
        List<BsonValue> out = new ArrayList<>();
        for (BsonValue element : value.asArray()) {
            out.add(excludeValue(node, element));
        }
        return new BsonArray(out);
    }

    /**
     * find's $slice at path[from..] (projection_executor_utils, applyFindSliceProjection): through
     * documents and through arrays' documents (other elements, nested arrays included, untouched),
     * slicing the array at the end of the path; anything else stays as it is.
     */
    static BsonDocument slice(BsonDocument doc, String[] path, int from, Integer skip, int limit) {
        BsonValue value = doc.get(path[from]);
        if (value == null) {
            return doc;
        }
        int next = from + 1;
        BsonValue sliced = value;
        if (value.isArray()) {
            sliced = next == path.length ? sliceArray(value.asArray(), skip, limit)
                    : sliceInElements(value.asArray(), path, next, skip, limit);
        } else if (value.isDocument() && next < path.length) {
            sliced = slice(value.asDocument(), path, next, skip, limit);
        }
        BsonDocument out = new BsonDocument();
        out.putAll(doc);
        out.put(path[from], sliced); // in place: a LinkedHashMap keeps the field's position
        return out;
    }

    private static BsonArray sliceInElements(BsonArray array, String[] path, int from, Integer skip, int limit) {
        List<BsonValue> out = new ArrayList<>();
        for (BsonValue element : array) {
            out.add(element.isDocument() ? slice(element.asDocument(), path, from, skip, limit) : element);
        }
        return new BsonArray(out);
    }

    /**
     * sliceArray: with only a count, the first n elements, or the last -n; with [skip, limit] (limit
     * positive), limit elements from skip, counted from the end when skip is negative.
     */
    static BsonArray sliceArray(BsonArray array, Integer skip, int limit) {
        long len = array.size();
        long start;
        long count;
        if (skip == null) {
            start = limit < 0 ? Math.max(0, len + limit) : 0;
            count = limit < 0 ? len - start : Math.min(len, limit);
        } else {
            start = skip < 0 ? Math.max(0, len + skip) : Math.min(len, skip);
            count = Math.min(len - start, limit);
        }
        return new BsonArray(new ArrayList<>(array.getValues().subList((int) start, (int) (start + count))));
    }
}
