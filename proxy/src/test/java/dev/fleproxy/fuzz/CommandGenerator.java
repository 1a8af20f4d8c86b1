package dev.fleproxy.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.OpMsg;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

/**
 * Builds structured-ish MongoDB commands from fuzzer data: find, insert, update, delete,
 * findAndModify, aggregate, count, distinct, bulkWrite, createIndexes, create/collMod, getMore and
 * others, on hr.people (ssn deterministic, address.street, items.price), hr.all (fields "*") and
 * hr.plain (no policy). Wherever a value is one of a policy field's (written to it, compared with
 * it, matched against it) the generator may put {@link #MARKER}, and counts how often it did: the
 * proxy must never forward that string as it is. Everywhere else it puts other values.
 */
final class CommandGenerator {
    /** A policy field's value in plaintext: must never leave the proxy as it is. */
    static final String MARKER = "FLEFUZZ-SECRET-7c1";

    static final String[] COLLECTIONS = {"people", "all", "plain"};
    private static final String[] PEOPLE_TOP = {"_id", "ssn", "address", "items", "name", "tags", "n"};
    private static final String[] ALL_TOP = {"_id", "a", "b", "c", "2024", "name"};
    private static final String[] SUB = {"street", "city", "price", "qty", "x"};
    private static final String[] QUERY_OPS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all",
        "$exists", "$type", "$size", "$regex", "$elemMatch", "$not", "$mod", "$bitsAllSet", "$options", "$near"};
    private static final String[] UPDATE_OPS = {"$set", "$setOnInsert", "$unset", "$inc", "$mul", "$min", "$max",
        "$rename", "$push", "$addToSet", "$pull", "$pullAll", "$pop", "$currentDate", "$bit"};
    private static final String[] EXPR_OPS = {"$eq", "$ne", "$gt", "$lt", "$in", "$concat", "$toUpper", "$cond",
        "$ifNull", "$literal", "$substr", "$strLenCP", "$add", "$getField"};
    private static final String[] STAGES = {"$match", "$project", "$addFields", "$set", "$unset", "$group", "$sort",
        "$limit", "$skip", "$unwind", "$count", "$lookup", "$facet", "$unionWith", "$replaceRoot", "$replaceWith",
        "$sample", "$out", "$merge", "$sortByCount", "$bucket", "$densify", "$graphLookup", "$redact", "$documents"};
    private static final String[] OTHER_COMMANDS = {"listIndexes", "drop", "collStats", "explain", "mapReduce",
        "killCursors", "validate", "renameCollection", "dropIndexes", "listCollections", "serverStatus", "unknownCmd"};

    /** Arguments given a document holding a field's value: unknown, generic, settings, options, hints. */
    private static final String[] EXTRA = {"comment", "filteX", "bogusArg", "writeConcern", "readConcern", "lsid",
        "collation", "hint", "maxTimeMS", "$readPreference", "cursor"};

    private final FuzzedDataProvider d;
    /** How many times MARKER was put into the command. */
    int placed;

    CommandGenerator(FuzzedDataProvider d) {
        this.d = d;
    }

    // ---- where a policy field's values are --------------------------------------------------------

    /** Whether a logical path (indexes and positional operators dropped) is or lies in a policy field. */
    static boolean sensitive(String coll, String path) {
        if (path.isEmpty()) {
            return false;
        }
        String logical = logical(path);
        return switch (coll) {
            case "people" -> under(logical, "ssn") || under(logical, "address.street") || under(logical, "items.price");
            case "all" -> !logical.equals("_id") && !logical.startsWith("_id.");
            default -> false;
        };
    }

    private static boolean under(String path, String field) {
        return path.equals(field) || path.startsWith(field + ".");
    }

    /** The path without array indexes and positional operators after its first segment. */
    static String logical(String path) {
        String[] segs = path.split("\\.", -1);
        StringBuilder b = new StringBuilder(segs[0]);
        for (int i = 1; i < segs.length; i++) {
            String s = segs[i];
            if (!s.isEmpty() && (s.chars().allMatch(Character::isDigit) || s.startsWith("$"))) {
                continue;
            }
            b.append('.').append(s);
        }
        return b.toString();
    }

    private static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    // ---- scalars and names ------------------------------------------------------------------------

    private int small(int max) {
        return d.consumeInt(0, max);
    }

    /** A string from the fuzzer; never the marker (the count must be exact). */
    String str(int max) {
        return d.consumeString(max).replace(MARKER, "m");
    }

    /** A field name: the collection's vocabulary, sometimes dotted or positional, sometimes anything. */
    String topName(String coll) {
        String[] top = coll.equals("all") ? ALL_TOP : PEOPLE_TOP;
        return switch (small(9)) {
            case 0 -> "address.street";
            case 1 -> "items.price";
            case 2 -> "items." + small(2) + ".price";
            case 3 -> "address.city";
            case 4 -> keyName(str(6));
            default -> d.pickValue(top);
        };
    }

    /**
     * A key of a sub-document: the vocabulary or anything else that is one plain field name (no
     * dot, not all digits, no leading $), so the generator's idea of its path is MongoDB's.
     */
    private String subName() {
        if (small(7) != 0) {
            return d.pickValue(SUB);
        }
        String k = keyName(str(6)).replace('.', '_');
        return k.startsWith("$") || k.chars().allMatch(Character::isDigit) ? "k" + k.replace('$', '_') : k;
    }

    /** A top-level key of a stored document: the vocabulary (undotted) or a plain field name. */
    private String docName(String coll) {
        String[] top = coll.equals("all") ? ALL_TOP : PEOPLE_TOP;
        return small(6) == 0 ? subName() : d.pickValue(top);
    }

    /** A usable BSON key: no NUL (the harness, not the proxy, would fail to encode it). */
    static String keyName(String s) {
        String k = s.replace("\0", "");
        return k.isEmpty() ? "k" : k;
    }

    /** A value at this path; the marker (or a value holding it) where the path is a policy field's. */
    BsonValue value(String coll, String path, int depth) {
        boolean secret = sensitive(coll, path);
        int kind = small(secret ? 14 : 12); // 13 and 14, the marker, only where it is secret
        switch (kind) {
            case 0:
                return new BsonInt32(d.consumeInt());
            case 1:
                return new BsonInt64(d.consumeLong());
            case 2:
                return new BsonDouble(d.consumeDouble());
            case 3:
                return BsonBoolean.valueOf(d.consumeBoolean());
            case 4:
                return BsonNull.VALUE;
            case 5:
                return new BsonBinary((byte) small(9), d.consumeBytes(small(24)));
            case 6:
                return new BsonObjectId(new ObjectId(java.util.Arrays.copyOf(d.consumeBytes(12), 12)));
            case 7:
                return new BsonDateTime(d.consumeLong());
            case 8:
                if (depth > 0) {
                    BsonDocument doc = new BsonDocument();
                    int n = small(3);
                    for (int i = 0; i < n; i++) {
                        String k = subName();
                        doc.put(k, value(coll, child(path, k), depth - 1));
                    }
                    return doc;
                }
                return new BsonString(str(8));
            case 9:
                if (depth > 0) {
                    BsonArray a = new BsonArray();
                    int n = small(3);
                    for (int i = 0; i < n; i++) {
                        a.add(value(coll, path, depth - 1));
                    }
                    return a;
                }
                return new BsonInt32(small(5));
            case 10:
                return switch (small(5)) {
                    case 0 -> new BsonMinKey();
                    case 1 -> new BsonMaxKey();
                    case 2 -> new BsonTimestamp(d.consumeLong());
                    case 3 -> new BsonDecimal128(Decimal128.parse(String.valueOf(d.consumeInt())));
                    case 4 -> new BsonJavaScript(str(8));
                    default -> new BsonRegularExpression(keyName(str(6)), "i");
                };
            case 13:
                placed++;
                return new BsonString(MARKER);
            case 14:
                placed++;
                return d.consumeBoolean() ? new BsonRegularExpression(MARKER)
                        : new BsonDocument("k", new BsonString(MARKER)); // a sub-document holding it
            default:
                return new BsonString(str(12));
        }
    }

    /** A document at this path (path "" for a whole stored document). */
    BsonDocument document(String coll, String path, int depth) {
        BsonDocument doc = new BsonDocument();
        int n = small(5);
        for (int i = 0; i < n; i++) {
            String k = path.isEmpty() ? docName(coll) : subName();
            doc.put(k, value(coll, child(path, k), depth));
        }
        return doc;
    }

    // ---- queries ----------------------------------------------------------------------------------

    /** A query filter whose field paths are relative to prefix. */
    BsonDocument filter(String coll, String prefix, int depth) {
        BsonDocument f = new BsonDocument();
        int n = small(3);
        for (int i = 0; i < n; i++) {
            int kind = small(9);
            if (kind <= 3 || depth <= 0) {
                String k = prefix.isEmpty() ? topName(coll) : subName();
                f.put(k, value(coll, child(prefix, k), 2));
            } else if (kind <= 5) {
                String k = prefix.isEmpty() ? topName(coll) : subName();
                f.put(k, predicate(coll, child(prefix, k), depth - 1));
            } else if (kind == 6) {
                BsonArray clauses = new BsonArray();
                int m = 1 + small(2);
                for (int j = 0; j < m; j++) {
                    clauses.add(filter(coll, prefix, depth - 1));
                }
                f.put(d.pickValue(new String[] {"$and", "$or", "$nor"}), clauses);
            } else if (kind == 7 && prefix.isEmpty()) {
                String k = topName(coll);
                f.put("$expr", new BsonDocument(d.pickValue(new String[] {"$eq", "$ne", "$gt", "$in"}),
                        new BsonArray(List.of(new BsonString("$" + k), d.consumeBoolean()
                                ? value(coll, k, 1) : new BsonDocument("$literal", value(coll, k, 1))))));
            } else {
                f.put(d.pickValue(new String[] {"$comment", "$text", "$where", "$jsonSchema"}),
                        d.consumeBoolean() ? new BsonString(str(8)) : new BsonDocument("$search", new BsonString(str(8))));
            }
        }
        return f;
    }

    /** {op: operand, …} for the field at path. */
    private BsonDocument predicate(String coll, String path, int depth) {
        BsonDocument p = new BsonDocument();
        int n = 1 + small(1);
        for (int i = 0; i < n; i++) {
            String op = d.pickValue(QUERY_OPS);
            BsonValue operand = switch (op) {
                case "$in", "$nin", "$all" -> {
                    BsonArray a = new BsonArray();
                    int m = small(3);
                    for (int j = 0; j < m; j++) {
                        a.add(value(coll, path, 1));
                    }
                    yield a;
                }
                case "$exists" -> BsonBoolean.valueOf(d.consumeBoolean());
                case "$type" -> new BsonString(d.pickValue(new String[] {"string", "binData", "int", "object"}));
                case "$size", "$bitsAllSet" -> new BsonInt32(small(4));
                case "$mod" -> new BsonArray(List.of(new BsonInt32(2), new BsonInt32(small(1))));
                case "$regex" -> sensitive(coll, path) && d.consumeBoolean() ? placedString() : new BsonString(str(6));
                case "$elemMatch" -> d.consumeBoolean() ? filter(coll, path, depth) : predicate(coll, path, depth);
                case "$not" -> depth > 0 ? predicate(coll, path, depth - 1) : new BsonRegularExpression("x");
                default -> value(coll, path, 1);
            };
            p.put(op, operand);
        }
        return p;
    }

    private BsonString placedString() {
        placed++;
        return new BsonString(MARKER);
    }

    /** A sort or projection specification. */
    private BsonDocument spec(String coll) {
        BsonDocument s = new BsonDocument();
        int n = small(3);
        for (int i = 0; i < n; i++) {
            s.put(topName(coll), switch (small(4)) {
                case 0 -> new BsonInt32(-1);
                case 1 -> new BsonInt32(0);
                case 2 -> new BsonDocument(d.pickValue(new String[] {"$slice", "$elemMatch", "$meta", "$literal"}),
                        new BsonInt32(1));
                default -> new BsonInt32(1);
            });
        }
        return s;
    }

    // ---- updates ----------------------------------------------------------------------------------

    /** An update: operators, a replacement document or a pipeline; may add arrayFilters to into. */
    BsonValue update(String coll, BsonDocument into, String arrayFiltersKey) {
        int kind = small(5);
        if (kind == 0) {
            return document(coll, "", 2);
        }
        if (kind == 1) {
            return pipeline(coll, true);
        }
        BsonDocument u = new BsonDocument();
        int n = 1 + small(2);
        boolean filtered = false;
        for (int i = 0; i < n; i++) {
            String op = d.pickValue(UPDATE_OPS);
            BsonDocument fields = new BsonDocument();
            int m = 1 + small(1);
            for (int j = 0; j < m; j++) {
                String path = topName(coll);
                if (path.startsWith("items") && small(3) == 0) {
                    path = "items." + d.pickValue(new String[] {"$", "$[]", "$[e]", "0"}) + ".price";
                    filtered |= path.contains("$[e]");
                }
                BsonValue v = switch (op) {
                    case "$unset", "$currentDate" -> new BsonString("");
                    case "$rename" -> new BsonString(keyName(topName(coll)));
                    case "$inc", "$mul" -> new BsonInt32(d.consumeInt(-5, 5));
                    case "$pop" -> new BsonInt32(1);
                    case "$bit" -> new BsonDocument("and", new BsonInt32(1));
                    case "$push", "$addToSet" -> d.consumeBoolean() ? value(coll, path, 2)
                            : new BsonDocument("$each", new BsonArray(List.of(value(coll, path, 2), value(coll, path, 1))));
                    case "$pull" -> d.consumeBoolean() ? value(coll, path, 2) : filter(coll, path, 1);
                    case "$pullAll" -> new BsonArray(List.of(value(coll, path, 1)));
                    default -> value(coll, path, 2);
                };
                fields.put(path, v);
            }
            u.put(op, fields);
        }
        if (filtered || (into != null && small(4) == 0)) {
            // e names elements of items when the update says items.$[e]; otherwise of nothing the generator knows
            String target = filtered ? "items" : "";
            BsonDocument af = new BsonDocument();
            if (filtered && d.consumeBoolean()) {
                af.put("e.price", value(coll, "items.price", 1));
            } else if (filtered) {
                af.put("e", new BsonDocument("price", value(coll, "items.price", 1)));
            } else {
                af.put("e." + subName(), value("plain", target, 1));
            }
            if (into != null) {
                into.put(arrayFiltersKey, new BsonArray(List.of(af)));
            }
        }
        return u;
    }

    /** An expression assigning to path (secret where path is a policy field). */
    private BsonValue expression(String coll, String path, int depth) {
        if (depth <= 0 || small(2) == 0) {
            return small(3) == 0 ? new BsonString("$" + topName(coll)) : value(coll, path, 1);
        }
        String op = d.pickValue(EXPR_OPS);
        BsonArray args = new BsonArray();
        int n = 1 + small(2);
        for (int i = 0; i < n; i++) {
            args.add(expression(coll, path, depth - 1));
        }
        return new BsonDocument(op, op.equals("$literal") ? args.get(0) : args);
    }

    /**
     * An aggregation pipeline. In an update pipeline, values assigned to policy fields are secret
     * (they are written); in a read pipeline only $match stages before the first stage that reshapes
     * documents hold secrets (after one, a name may mean another field).
     */
    BsonArray pipeline(String coll, boolean forUpdate) {
        BsonArray stages = new BsonArray();
        int n = small(4);
        boolean reshaped = false;
        for (int i = 0; i < n; i++) {
            String stage = forUpdate ? d.pickValue(new String[] {"$set", "$addFields", "$project", "$unset",
                "$replaceRoot", "$replaceWith"}) : d.pickValue(STAGES);
            String c = reshaped || forUpdate && !stage.equals("$set") && !stage.equals("$addFields") ? "plain" : coll;
            BsonValue spec = switch (stage) {
                case "$match" -> filter(c, "", 2);
                case "$set", "$addFields", "$project" -> {
                    BsonDocument s = new BsonDocument();
                    int m = 1 + small(2);
                    for (int j = 0; j < m; j++) {
                        String k = topName(coll);
                        s.put(k, stage.equals("$project") && d.consumeBoolean() ? new BsonInt32(small(1))
                                : expression(forUpdate && !stage.equals("$project") ? coll : "plain", k, 2));
                    }
                    yield s;
                }
                case "$unset" -> new BsonString(topName(coll));
                case "$group" -> new BsonDocument("_id", new BsonString("$" + topName(coll)))
                        .append("n", new BsonDocument("$sum", new BsonInt32(1)));
                case "$sort" -> new BsonDocument(topName(coll), new BsonInt32(1));
                case "$limit", "$skip" -> new BsonInt32(1 + small(5));
                case "$sample" -> new BsonDocument("size", new BsonInt32(1 + small(5)));
                case "$unwind" -> new BsonString("$" + topName(coll));
                case "$count" -> new BsonString("n");
                case "$sortByCount" -> new BsonString("$" + topName(coll));
                case "$lookup", "$graphLookup" -> new BsonDocument("from", new BsonString(d.pickValue(COLLECTIONS)))
                        .append("localField", new BsonString(topName(coll)))
                        .append("foreignField", new BsonString(topName(coll)))
                        .append("as", new BsonString("j"));
                case "$unionWith" -> new BsonDocument("coll", new BsonString(d.pickValue(COLLECTIONS)));
                case "$out" -> new BsonString(d.pickValue(COLLECTIONS));
                case "$merge" -> new BsonDocument("into", new BsonString(d.pickValue(COLLECTIONS)));
                case "$facet" -> new BsonDocument("f", new BsonArray(List.of(new BsonDocument("$match",
                        filter("plain", "", 1)))));
                case "$replaceRoot" -> new BsonDocument("newRoot", new BsonString("$" + topName(coll)));
                case "$replaceWith" -> new BsonString("$" + topName(coll));
                case "$documents" -> new BsonArray(List.of(document("plain", "", 1)));
                default -> new BsonDocument(str(4).isEmpty() ? "x" : "y", value("plain", "", 1));
            };
            stages.add(new BsonDocument(stage, spec));
            if (!stage.equals("$match") && !stage.equals("$sort") && !stage.equals("$limit") && !stage.equals("$skip")) {
                reshaped = true;
            }
        }
        return stages;
    }

    // ---- whole commands ---------------------------------------------------------------------------

    /** A command on hr.people, hr.all or hr.plain (or once in a while another database). */
    OpMsg command() {
        String coll = d.pickValue(COLLECTIONS);
        String db = small(15) == 0 ? d.pickValue(new String[] {"admin", "other", "hr2"}) : "hr";
        String effective = db.equals("hr") ? coll : "plain";
        List<DocumentSequence> seqs = new ArrayList<>();
        BsonDocument body;
        int cmd = small(15);
        switch (cmd) {
            case 0, 1 -> {
                body = new BsonDocument("find", new BsonString(coll)).append("filter", filter(effective, "", 3));
                if (d.consumeBoolean()) {
                    body.append("projection", spec(coll));
                }
                if (d.consumeBoolean()) {
                    body.append("sort", spec(coll));
                }
                if (small(4) == 0) {
                    String k = topName(coll);
                    body.append(d.pickValue(new String[] {"min", "max"}), new BsonDocument(k, value(effective, k, 1)));
                }
                if (small(6) == 0) {
                    body.append("hint", spec(coll));
                }
                if (small(4) == 0) {
                    body.append("let", new BsonDocument("v", value("plain", "", 1)));
                }
                body.append("limit", new BsonInt32(small(3))).append("batchSize", new BsonInt32(small(3)));
            }
            case 2, 3 -> {
                body = new BsonDocument("insert", new BsonString(coll));
                List<BsonDocument> docs = new ArrayList<>();
                int n = 1 + small(2);
                for (int i = 0; i < n; i++) {
                    docs.add(document(effective, "", 3));
                }
                if (d.consumeBoolean()) {
                    seqs.add(new DocumentSequence("documents", docs));
                } else {
                    body.append("documents", new BsonArray(new ArrayList<BsonValue>(docs)));
                }
                body.append("ordered", BsonBoolean.valueOf(d.consumeBoolean()));
            }
            case 4, 5 -> {
                body = new BsonDocument("update", new BsonString(coll));
                List<BsonDocument> updates = new ArrayList<>();
                int n = 1 + small(1);
                for (int i = 0; i < n; i++) {
                    BsonDocument u = new BsonDocument("q", filter(effective, "", 2));
                    u.append("u", update(effective, u, "arrayFilters"));
                    u.append("upsert", BsonBoolean.valueOf(d.consumeBoolean()));
                    u.append("multi", BsonBoolean.valueOf(d.consumeBoolean()));
                    updates.add(u);
                }
                if (d.consumeBoolean()) {
                    seqs.add(new DocumentSequence("updates", updates));
                } else {
                    body.append("updates", new BsonArray(new ArrayList<BsonValue>(updates)));
                }
            }
            case 6 -> {
                BsonDocument del = new BsonDocument("q", filter(effective, "", 3)).append("limit", new BsonInt32(small(1)));
                body = new BsonDocument("delete", new BsonString(coll))
                        .append("deletes", new BsonArray(List.of(del)));
            }
            case 7 -> {
                body = new BsonDocument("findAndModify", new BsonString(coll)).append("query", filter(effective, "", 2));
                if (d.consumeBoolean()) {
                    body.append("remove", BsonBoolean.TRUE);
                } else {
                    body.append("update", update(effective, body, "arrayFilters"));
                }
                if (d.consumeBoolean()) {
                    body.append("fields", spec(coll));
                }
                body.append("new", BsonBoolean.valueOf(d.consumeBoolean()))
                        .append("upsert", BsonBoolean.valueOf(d.consumeBoolean()));
            }
            case 8, 9 -> body = new BsonDocument("aggregate", new BsonString(coll))
                    .append("pipeline", pipeline(effective, false))
                    .append("cursor", new BsonDocument());
            case 10 -> body = small(1) == 0
                    ? new BsonDocument("count", new BsonString(coll)).append("query", filter(effective, "", 2))
                    : new BsonDocument("distinct", new BsonString(coll)).append("key", new BsonString(topName(coll)))
                            .append("query", filter(effective, "", 2));
            case 11 -> {
                body = new BsonDocument("bulkWrite", new BsonInt32(1));
                db = "admin";
                List<BsonDocument> ops = new ArrayList<>();
                int n = 1 + small(2);
                for (int i = 0; i < n; i++) {
                    int ns = small(2);
                    String c = COLLECTIONS[ns];
                    ops.add(switch (small(2)) {
                        case 0 -> new BsonDocument("insert", new BsonInt32(ns)).append("document", document(c, "", 2));
                        case 1 -> {
                            BsonDocument op = new BsonDocument("update", new BsonInt32(ns))
                                    .append("filter", filter(c, "", 2));
                            op.append("updateMods", update(c, op, "arrayFilters"));
                            yield op;
                        }
                        default -> new BsonDocument("delete", new BsonInt32(ns)).append("filter", filter(c, "", 2));
                    });
                }
                seqs.add(new DocumentSequence("ops", ops));
                seqs.add(new DocumentSequence("nsInfo", List.of(new BsonDocument("ns", new BsonString("hr.people")),
                        new BsonDocument("ns", new BsonString("hr.all")),
                        new BsonDocument("ns", new BsonString("hr.plain")))));
            }
            case 12 -> body = new BsonDocument("createIndexes", new BsonString(coll)).append("indexes",
                    new BsonArray(List.of(new BsonDocument("key", spec(coll)).append("name", new BsonString("i"))
                            .append("partialFilterExpression", filter(effective, "", 2)))));
            case 13 -> {
                body = new BsonDocument(d.pickValue(new String[] {"create", "collMod"}), new BsonString(coll));
                String option = d.pickValue(new String[] {"validator", "pipeline", "viewOn"});
                // a validator is a query on the collection's own fields; the others are not checked here
                body.append(option, option.equals("validator") ? filter(effective, "", 2)
                        : option.equals("pipeline") ? pipeline("plain", false) : new BsonString(d.pickValue(COLLECTIONS)));
            }
            default -> {
                String name = small(3) == 0 ? "getMore" : d.pickValue(OTHER_COMMANDS);
                body = name.equals("getMore")
                        ? new BsonDocument("getMore", new BsonInt64(small(50))).append("collection", new BsonString(coll))
                        : new BsonDocument(name, new BsonString(coll)).append("x", value("plain", "", 2));
            }
        }
        if (small(5) == 0 && !body.containsKey(EXTRA[0])) {
            // an argument the proxy must examine or refuse: a policy field's value in it must never pass
            String k = topName(coll);
            body.append(d.pickValue(EXTRA), new BsonDocument(k, value(effective, k, 1)));
        }
        body.append("$db", new BsonString(db));
        return new OpMsg(small(20) == 0 ? OpMsg.EXHAUST_ALLOWED : 0, body, seqs);
    }
}
