package dev.fleproxy.rewrite.read;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Which paths of an evaluated pipeline's output documents may hold values of the source
 * collection's encrypted fields, or values computed from them: the policy's paths to begin with,
 * followed through each stage the proxy runs (a copy under another name, a $group key or
 * accumulator fed by one, a projection keeping one) — read conservatively, so a path is dropped
 * only where a stage certainly removes or overwrites it. An $out or $merge may write such a path
 * only where its target encrypts it ({@link OutputTarget}); a document's membership in the
 * output is not a path, and is what the server learns (docs/query-model.md).
 */
final class CarriedPaths {
    /** Path → true if a randomized field feeds it (its equalities must stay hidden), false if only deterministic ones. */
    private Map<String, Boolean> paths = new LinkedHashMap<>();
    /**
     * Every top-level field but _id (a source under {@code fields: "*"}, until a stage names the
     * fields it keeps): null if not, else whether randomized (always, under "*").
     */
    private Boolean everyTopLevel;

    /** What the source collection's documents carry, before any stage. */
    static CarriedPaths of(CollectionPolicy source) {
        CarriedPaths c = new CarriedPaths();
        if (source.allFields()) {
            c.everyTopLevel = true;
        }
        for (FieldRule r : source.fields().values()) {
            c.paths.put(r.path(), !r.deterministic());
        }
        return c;
    }

    /**
     * After these stages: from the first, those the server runs in the candidate read included
     * (each one the evaluator compiled, or {@link PlainStages} let through).
     */
    CarriedPaths through(List<BsonValue> stages) {
        for (BsonValue s : stages) {
            String name = s.asDocument().getFirstKey();
            stage(name, s.asDocument().get(name));
        }
        return this;
    }

    Map<String, Boolean> paths() {
        return paths;
    }

    Boolean everyTopLevel() {
        return everyTopLevel;
    }

    boolean none() {
        return paths.isEmpty() && everyTopLevel == null;
    }

    private void stage(String name, BsonValue spec) {
        switch (name) {
            case "$match", "$sort", "$skip", "$limit" -> {
                // the documents keep their fields: which ones pass, and their order, is not a path
            }
            case "$unwind", "$lookup" -> {
                // only ever in the server's prefix (PlainStages), on and into plain paths: no value of
                // an encrypted field moves, and keeping every path carried so far is the safe reading
            }
            case "$unset" -> {
                for (BsonValue f : spec.isArray() ? spec.asArray().getValues() : List.of(spec)) {
                    if (f.isString()) {
                        removeAtOrUnder(f.asString().getValue());
                    }
                }
            }
            case "$project" -> project(spec.asDocument());
            case "$addFields", "$set" -> addFields(spec.asDocument());
            case "$count" -> {
                paths = new LinkedHashMap<>();
                everyTopLevel = null;
            }
            case "$group" -> {
                Map<String, Boolean> out = new LinkedHashMap<>();
                for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
                    Boolean fed = fedBy(e.getValue()); // _id's expression, or {accumulator: argument}
                    if (fed != null) {
                        out.put(e.getKey(), fed);
                    }
                }
                paths = out;
                everyTopLevel = null;
            }
            case "$sortByCount" -> {
                Boolean fed = fedBy(spec);
                paths = new LinkedHashMap<>();
                if (fed != null) {
                    paths.put("_id", fed);
                }
                everyTopLevel = null;
            }
            default -> throw new NotEvaluable("the stage " + name + " before an $out or $merge");
        }
    }

    /** Inclusion (fields kept, fields computed) or exclusion, as the server tells them apart. */
    private void project(BsonDocument spec) {
        Map<String, BsonValue> flat = new LinkedHashMap<>();
        flatten(spec, "", flat);
        boolean exclusion = flat.entrySet().stream().allMatch(e -> excludes(e.getValue()) || e.getKey().equals("_id"))
                && flat.entrySet().stream().anyMatch(e -> excludes(e.getValue()) && !e.getKey().equals("_id"));
        if (exclusion || flat.keySet().stream().allMatch("_id"::equals) && excludes(flat.get("_id"))) {
            flat.forEach((p, v) -> removeAtOrUnder(p));
            return;
        }
        Map<String, Boolean> out = new LinkedHashMap<>();
        if (!flat.containsKey("_id") || !excludes(flat.get("_id"))) {
            keep("_id", out); // _id stays unless excluded
        }
        for (Map.Entry<String, BsonValue> e : flat.entrySet()) {
            BsonValue v = e.getValue();
            if (excludes(v)) {
                continue;
            }
            if (v.isBoolean() || v.isNumber()) {
                keep(e.getKey(), out);
            } else {
                Boolean fed = fedBy(v);
                if (fed != null) {
                    out.merge(e.getKey(), fed, Boolean::logicalOr);
                }
            }
        }
        paths = out;
        everyTopLevel = null;
    }

    /** Computed fields: each overwrites what was at its path, with what its expression reads of the input. */
    private void addFields(BsonDocument spec) {
        Map<String, BsonValue> flat = new LinkedHashMap<>();
        flatten(spec, "", flat);
        Map<String, Boolean> fed = new HashMap<>();
        for (Map.Entry<String, BsonValue> e : flat.entrySet()) {
            Boolean f = fedBy(e.getValue()); // read from the stage's input, before any of its own fields
            if (f != null) {
                fed.put(e.getKey(), f);
            }
        }
        for (String p : flat.keySet()) {
            removeAtOrUnder(p);
        }
        fed.forEach((p, f) -> paths.merge(p, f, Boolean::logicalOr));
    }

    /** Paths kept by an inclusion of {@code p}: those at or under it, or p itself if it lies inside one. */
    private void keep(String p, Map<String, Boolean> out) {
        for (Map.Entry<String, Boolean> c : paths.entrySet()) {
            if (c.getKey().equals(p) || c.getKey().startsWith(p + ".")) {
                out.merge(c.getKey(), c.getValue(), Boolean::logicalOr);
            } else if (p.startsWith(c.getKey() + ".")) {
                out.merge(p, c.getValue(), Boolean::logicalOr);
            }
        }
        if (everyTopLevel != null && !top(p).equals("_id")) {
            out.merge(p, everyTopLevel, Boolean::logicalOr);
        }
    }

    private void removeAtOrUnder(String p) {
        for (Iterator<String> it = paths.keySet().iterator(); it.hasNext(); ) {
            String c = it.next();
            if (c.equals(p) || c.startsWith(p + ".")) {
                it.remove();
            }
        }
    }

    /**
     * Whether an expression reads a carried path (null: it reads none), and if so whether a
     * randomized one. Every "$path" string anywhere in it counts, operators and literals alike;
     * "$$ROOT" and "$$CURRENT" read the whole document, any other variable is taken to.
     */
    private Boolean fedBy(BsonValue expression) {
        Boolean[] fed = {null};
        references(expression, r -> {
            for (Map.Entry<String, Boolean> c : paths.entrySet()) {
                if (r.isEmpty() || r.equals(c.getKey()) || r.startsWith(c.getKey() + ".") || c.getKey().startsWith(r + ".")) {
                    fed[0] = fed[0] == null ? c.getValue() : fed[0] || c.getValue();
                }
            }
            if (everyTopLevel != null && (r.isEmpty() || !top(r).equals("_id"))) {
                fed[0] = fed[0] == null ? everyTopLevel : fed[0] || everyTopLevel;
            }
        }, 0);
        return fed[0];
    }

    /** Each path an expression reads ("" for the whole document). */
    private static void references(BsonValue v, java.util.function.Consumer<String> out, int depth) {
        if (depth > 200) {
            throw new NotEvaluable("an expression nested too deeply");
        }
        if (v.isString() && v.asString().getValue().startsWith("$")) {
            String s = v.asString().getValue();
            if (!s.startsWith("$$")) {
                out.accept(s.substring(1));
            } else {
                int dot = s.indexOf('.');
                String var = dot < 0 ? s.substring(2) : s.substring(2, dot);
                out.accept((var.equals("ROOT") || var.equals("CURRENT")) && dot > 0 ? s.substring(dot + 1) : "");
            }
        } else if (v.isDocument()) {
            v.asDocument().values().forEach(x -> references(x, out, depth + 1));
        } else if (v.isArray()) {
            v.asArray().forEach(x -> references(x, out, depth + 1));
        }
    }

    /** A projection or $addFields spec as dotted paths: nested documents without operators are sub-specs. */
    private static void flatten(BsonDocument spec, String prefix, Map<String, BsonValue> out) {
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            String p = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            BsonValue v = e.getValue();
            if (v.isDocument() && !v.asDocument().isEmpty() && !v.asDocument().getFirstKey().startsWith("$")) {
                flatten(v.asDocument(), p, out);
            } else {
                out.put(p, v);
            }
        }
    }

    private static boolean excludes(BsonValue v) {
        return v.isBoolean() ? !v.asBoolean().getValue() : v.isNumber() && v.asNumber().doubleValue() == 0;
    }

    private static String top(String path) {
        int dot = path.indexOf('.');
        return dot < 0 ? path : path.substring(0, dot);
    }
}
