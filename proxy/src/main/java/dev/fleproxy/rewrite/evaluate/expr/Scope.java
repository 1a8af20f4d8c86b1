package dev.fleproxy.rewrite.evaluate.expr;

import java.util.HashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The variables an expression sees: $$ROOT and $$CURRENT (the document the stage is at), and those
 * bound by $map, $filter, $reduce and $let. Immutable: binding makes a new scope, so the inner
 * bindings of one array element never leak into the next.
 */
public final class Scope {
    private final BsonDocument root;
    private final Map<String, BsonValue> vars;

    private Scope(BsonDocument root, Map<String, BsonValue> vars) {
        this.root = root;
        this.vars = vars;
    }

    public static Scope of(BsonDocument doc) {
        return new Scope(doc, Map.of());
    }

    BsonDocument root() {
        return root;
    }

    /** A bound variable's value (null: bound to missing). */
    BsonValue get(String name) {
        return vars.get(name);
    }

    Scope with(String name, BsonValue value) {
        Map<String, BsonValue> next = new HashMap<>(vars);
        next.put(name, value);
        return new Scope(root, next);
    }
}
