package dev.fleproxy.rewrite.query;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.ArgKind;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.Map;
import java.util.Set;
import org.bson.BsonValue;

/**
 * Filters over what the server says about itself (listCollections, listDatabases, currentOp and
 * $currentOp, the profiler's filter): an allowlist of names, so that no such filter can carry a
 * value under a policy field's name to the server's logs and profiler ({@link ArgKind#METADATA_FILTER}).
 * A field the row lists is compared with single values, lists of them, or operators from a short
 * list; a path below a field of kind CONFIGURATION passes if it names no policy field; logical
 * operators combine such conditions. Anything else is refused: the filter's syntax is followed
 * only as far as the proxy knows it.
 */
public final class MetadataFilters {
    /** Comparisons whose operand is a single value or a list of them. */
    private static final Set<String> COMPARISONS = Set.of("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin",
            "$exists", "$type", "$regex", "$options", "$size", "$all");
    private static final Set<String> LOGICAL = Set.of("$and", "$or", "$nor");

    private MetadataFilters() {
    }

    /** Refuses the filter unless every condition in it is on a field {@code allowed} lists, with plain operands. */
    public static void check(BsonValue filter, Arg allowed, Arguments.On on, String where) {
        if (!filter.isDocument()) {
            throw Refusal.command(on.ns(), "the filter of " + where + " must be a document");
        }
        for (Map.Entry<String, BsonValue> e : filter.asDocument().entrySet()) {
            String k = e.getKey();
            BsonValue v = e.getValue();
            if (LOGICAL.contains(k)) {
                if (!v.isArray()) {
                    throw Refusal.command(on.ns(), k + " in the filter of " + where + " must be a list of filters");
                }
                for (BsonValue clause : v.asArray()) {
                    check(clause, allowed, on, where);
                }
            } else if (k.equals("$comment")) {
                scalar(v, on, where, k);
            } else if (k.startsWith("$")) {
                throw Refusal.command(on.ns(), "the operator " + Arguments.quoted(k) + " in the filter of " + where
                        + " (a filter over the server's own records takes field conditions only)");
            } else {
                field(k, allowed, on, where);
                operand(v, on, where, k);
            }
        }
    }

    private static void field(String path, Arg allowed, Arguments.On on, String where) {
        int dot = path.indexOf('.');
        Arg field = allowed.field(dot < 0 ? path : path.substring(0, dot));
        boolean ok = field != null && (dot < 0 || field.kind() == ArgKind.CONFIGURATION);
        if (!ok) {
            throw Refusal.command(on.ns(), "the field '" + Arguments.quoted(path) + "' in the filter of " + where
                    + " is not one the proxy lets it name (" + String.join(", ", new java.util.TreeSet<>(
                    allowed.fields().keySet())) + ")");
        }
        // a field the row lists is the server's own, whatever its name; what lies below one of kind
        // CONFIGURATION (a collection's options, an operation's locks) may name no policy field
        if (dot > 0 && on.paths().kind(path.substring(dot + 1)) != PathKind.NONE) {
            throw on.paths().refuse(path, "the filter of " + where + " naming it");
        }
    }

    /** A single value, a list of single values, or comparison operators on those ($not of them too). */
    private static void operand(BsonValue v, Arguments.On on, String where, String field) {
        if (v.isArray()) {
            v.asArray().forEach(x -> scalar(x, on, where, field));
            return;
        }
        if (!v.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> op : v.asDocument().entrySet()) {
            if (op.getKey().equals("$not")) {
                operand(op.getValue(), on, where, field);
            } else if (COMPARISONS.contains(op.getKey())) {
                if (op.getValue().isArray()) {
                    op.getValue().asArray().forEach(x -> scalar(x, on, where, field));
                } else {
                    scalar(op.getValue(), on, where, field);
                }
            } else {
                throw Refusal.command(on.ns(), "the condition on '" + Arguments.quoted(field) + "' in the filter of "
                        + where + " (only comparisons with single values, or lists of them, are examined there)");
            }
        }
    }

    private static void scalar(BsonValue v, Arguments.On on, String where, String field) {
        if (v.isDocument() || v.isArray()) {
            throw Refusal.command(on.ns(), "a document or list compared with '" + Arguments.quoted(field) + "' in the "
                    + "filter of " + where + " (only single values are examined there)");
        }
    }
}
