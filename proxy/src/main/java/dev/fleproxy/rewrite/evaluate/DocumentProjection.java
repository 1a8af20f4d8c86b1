package dev.fleproxy.rewrite.evaluate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A find projection applied to plaintext documents with MongoDB's semantics (mongod 7/8).
 *
 * <p>Supports: inclusion (true or a non-zero number) or exclusion (false or zero), never mixed
 * except _id: 0 among inclusions; _id included by default in an inclusion; dotted paths, through
 * arrays of documents as find projects them (Projections); find's {$slice: n}, {$slice: -n} and
 * {$slice: [skip, limit]}, applied last, on the projected document (a projection of $slice alone
 * keeps every other field); {$elemMatch: ...} on a top-level field (the first matching element,
 * added after the included fields, as the server places it; alone it makes an inclusion).
 *
 * <p>Refuses with NotEvaluable when compiling: the positional $ operator, $meta, aggregation
 * expressions and literal values (anything but booleans, numbers, $slice and $elemMatch), mixed
 * inclusion and exclusion, $elemMatch on a dotted path or in an exclusion, colliding paths, empty
 * paths and fields starting with '$'.
 */
public final class DocumentProjection {
    private final ProjectionNode root;
    private final boolean inclusion;
    private final List<Map.Entry<String, ArrayLeaves.ElemMatch>> elemMatches;
    private final List<Slice> slices;

    private record Slice(String[] path, Integer skip, int limit) {
    }

    private DocumentProjection(ProjectionNode root, boolean inclusion,
                               List<Map.Entry<String, ArrayLeaves.ElemMatch>> elemMatches, List<Slice> slices) {
        this.root = root;
        this.inclusion = inclusion;
        this.elemMatches = elemMatches;
        this.slices = slices;
    }

    /** The projection compiled, or NotEvaluable naming what cannot be evaluated and why. */
    public static DocumentProjection compile(BsonDocument projection) {
        return new ProjectionParser().parse(projection);
    }

    /** The document as find would return it under this projection (a new document; values shared). */
    public BsonDocument apply(BsonDocument doc) {
        BsonDocument out = inclusion ? Projections.include(root, doc) : Projections.exclude(root, doc);
        for (Map.Entry<String, ArrayLeaves.ElemMatch> e : elemMatches) {
            BsonValue value = doc.get(e.getKey());
            int index = value != null && value.isArray() ? e.getValue().firstMatch(value.asArray()) : -1;
            if (index >= 0) {
                out.put(e.getKey(), new BsonArray(List.of(value.asArray().get(index))));
            }
        }
        for (Slice s : slices) {
            out = Projections.slice(out, s.path(), 0, s.skip(), s.limit());
        }
        return out;
    }

    /** The server's projection parser (projection_parser.cpp), limited to what apply() reproduces. */
    private static final class ProjectionParser {
        private final ProjectionNode root = new ProjectionNode(ProjectionNode.Kind.PATH);
        private final List<Map.Entry<String, ArrayLeaves.ElemMatch>> elemMatches = new ArrayList<>();
        private final List<Slice> slices = new ArrayList<>();
        private Boolean inclusion;

        DocumentProjection parse(BsonDocument projection) {
            boolean idSpecified = false;
            for (Map.Entry<String, BsonValue> e : projection.entrySet()) {
                String name = e.getKey();
                idSpecified |= name.equals("_id") || name.startsWith("_id.");
                field(name, path(name), e.getValue());
            }
            if (inclusion == null) {
                // find's defaults: $slice alone keeps the other fields, $elemMatch alone does not
                inclusion = slices.isEmpty() && !elemMatches.isEmpty();
            }
            if (!inclusion && !elemMatches.isEmpty()) {
                throw new NotEvaluable("projection: $elemMatch in an exclusion projection cannot be evaluated by "
                        + "the proxy");
            }
            if (inclusion && !idSpecified) {
                root.add(new String[] {"_id"}, new ProjectionNode(ProjectionNode.Kind.INCLUDE), "_id");
            }
            return new DocumentProjection(root, inclusion, elemMatches, slices);
        }

        private static String[] path(String name) {
            String[] path = FieldPaths.split(name, "projection");
            for (String segment : path) {
                if (segment.startsWith("$")) {
                    throw new NotEvaluable("projection: " + name + (segment.equals("$")
                            ? ": the positional $ operator cannot be evaluated by the proxy"
                            : ": a field starting with '$' (the server refuses it)"));
                }
            }
            return path;
        }

        private void field(String name, String[] path, BsonValue value) {
            if (value.isDocument()) {
                operator(name, path, value.asDocument());
            } else if (value.isBoolean() || BsonNumbers.isNumber(value)) {
                boolean include = BsonNumbers.trueValue(value);
                root.add(path, new ProjectionNode(include ? ProjectionNode.Kind.INCLUDE : ProjectionNode.Kind.EXCLUDE),
                        name);
                if (include || !name.equals("_id")) {
                    mode(include, name);
                }
            } else {
                throw new NotEvaluable("projection: " + name + ": the literal " + value
                        + " cannot be evaluated by the proxy");
            }
        }

        /** Inclusion and exclusion do not mix (but for _id: 0). */
        private void mode(boolean include, String name) {
            if (inclusion != null && inclusion != include) {
                throw new NotEvaluable("projection: cannot do " + (include ? "inclusion" : "exclusion")
                        + " on field " + name + " in " + (include ? "exclusion" : "inclusion")
                        + " projection (the server refuses it)");
            }
            inclusion = include;
        }

        private void operator(String name, String[] path, BsonDocument spec) {
            String op = spec.isEmpty() ? "" : spec.getFirstKey();
            if (op.equals("$slice") && spec.size() == 1) {
                Slice s = slice(name, path, spec.get("$slice"));
                root.add(path, new ProjectionNode(ProjectionNode.Kind.SLICE), name);
                slices.add(s);
            } else if (op.equals("$elemMatch") && spec.size() == 1) {
                if (path.length != 1) {
                    throw new NotEvaluable("projection: cannot use $elemMatch projection on a nested field "
                            + name + " (the server refuses it)");
                }
                root.add(path, new ProjectionNode(ProjectionNode.Kind.ELEM_MATCH), name);
                elemMatches.add(Map.entry(name, OperatorParser.elemMatch(spec.get("$elemMatch"))));
            } else {
                throw new NotEvaluable("projection: " + name + ": " + spec + " cannot be evaluated by the proxy "
                        + "(only $slice and $elemMatch are: not $meta, expressions or literals)");
            }
        }

        /** {$slice: n} or {$slice: [skip, limit]} with integers, limit positive. */
        private static Slice slice(String name, String[] path, BsonValue arg) {
            if (BsonNumbers.isNumber(arg)) {
                return new Slice(path, null, sliceInt(name, arg));
            }
            if (arg.isArray() && arg.asArray().size() == 2) {
                int skip = sliceInt(name, arg.asArray().get(0));
                int limit = sliceInt(name, arg.asArray().get(1));
                if (limit <= 0) {
                    throw new NotEvaluable("projection: " + name + ": $slice limit must be positive (the server "
                            + "refuses " + limit + ")");
                }
                return new Slice(path, skip, limit);
            }
            throw new NotEvaluable("projection: " + name + ": $slice takes a number or [skip, limit] (the server "
                    + "refuses " + arg + ")");
        }

        private static int sliceInt(String name, BsonValue v) {
            Integer i = BsonNumbers.isNumber(v) ? BsonNumbers.exactInt(v) : null;
            if (i == null) {
                throw new NotEvaluable("projection: " + name + ": $slice argument " + v + " is not an integer the "
                        + "proxy reproduces the server's conversion of");
            }
            return i;
        }
    }
}
