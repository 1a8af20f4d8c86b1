package dev.fleproxy.rewrite.evaluate.expr;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * Compiles an aggregation expression as the server parses it: "$path", "$$variable.path", a
 * literal, {$literal: v}, a document of expressions, an array of expressions, or {$operator:
 * operand}, the operator from one of the families (ArithmeticOperators, …). An operator outside
 * them, an unknown variable or a shape the server rejects is a {@link NotEvaluable} here, before
 * anything is read.
 */
public final class ExprCompiler {
    private static final int MAX_DEPTH = 150;
    private final Set<String> bound;
    private final int depth;

    private ExprCompiler(Set<String> bound, int depth) {
        this.bound = bound;
        this.depth = depth;
    }

    /** A top-level expression: only $$ROOT and $$CURRENT are defined. */
    public static Expr compile(BsonValue v) {
        return new ExprCompiler(Set.of(), 0).expr(v);
    }

    /** The same compiler with more variables defined (for $map's in, $filter's cond, …). */
    ExprCompiler binding(String... names) {
        Set<String> next = new HashSet<>(bound);
        for (String n : names) {
            next.add(n);
        }
        return new ExprCompiler(next, depth);
    }

    Expr expr(BsonValue v) {
        if (depth > MAX_DEPTH) {
            throw new NotEvaluable("an expression nested too deeply");
        }
        ExprCompiler inner = new ExprCompiler(bound, depth + 1);
        if (v.isString() && v.asString().getValue().startsWith("$")) {
            return inner.reference(v.asString().getValue());
        }
        if (v.isDocument()) {
            return inner.document(v.asDocument());
        }
        if (v.isArray()) {
            List<Expr> items = new ArrayList<>();
            v.asArray().forEach(item -> items.add(inner.expr(item)));
            return scope -> {
                BsonArray out = new BsonArray();
                for (Expr e : items) {
                    BsonValue x = e.eval(scope);
                    out.add(x == null ? BsonNull.VALUE : x); // a missing element is null in an array literal
                }
                return out;
            };
        }
        return scope -> v;
    }

    List<Expr> exprs(List<BsonValue> vs) {
        List<Expr> out = new ArrayList<>();
        vs.forEach(v -> out.add(expr(v)));
        return out;
    }

    private Expr reference(String s) {
        if (!s.startsWith("$$")) {
            String[] path = split(s.substring(1), s);
            return scope -> Paths.walk(scope.root(), path, 0);
        }
        int dot = s.indexOf('.');
        String var = dot < 0 ? s.substring(2) : s.substring(2, dot);
        String[] path = dot < 0 ? new String[0] : split(s.substring(dot + 1), s);
        if (var.equals("ROOT") || var.equals("CURRENT")) {
            return scope -> Paths.walk(scope.root(), path, 0);
        }
        if (var.equals("REMOVE")) {
            return scope -> null;
        }
        if (!bound.contains(var)) {
            throw new NotEvaluable("the variable $$" + var + " (the proxy knows $$ROOT, $$CURRENT, $$REMOVE and the "
                    + "variables of $map, $filter, $reduce and $let)");
        }
        return scope -> {
            BsonValue v = scope.get(var);
            return v == null ? null : Paths.walk(v, path, 0);
        };
    }

    private static String[] split(String path, String whole) {
        String[] parts = path.split("\\.", -1);
        for (String p : parts) {
            if (p.isEmpty() || p.startsWith("$")) {
                throw new NotEvaluable("the field path '" + whole + "'");
            }
        }
        return parts;
    }

    private Expr document(BsonDocument d) {
        if (!d.isEmpty() && d.getFirstKey().startsWith("$")) {
            if (d.size() != 1) {
                throw new NotEvaluable("an expression document with an operator and other fields");
            }
            return operator(d.getFirstKey(), d.get(d.getFirstKey()));
        }
        Map<String, Expr> fields = new LinkedHashMap<>();
        for (Map.Entry<String, BsonValue> e : d.entrySet()) {
            if (e.getKey().startsWith("$") || e.getKey().contains(".")) {
                throw new NotEvaluable("the field name '" + e.getKey() + "' in an expression document");
            }
            fields.put(e.getKey(), expr(e.getValue()));
        }
        return scope -> {
            BsonDocument out = new BsonDocument();
            fields.forEach((name, e) -> {
                BsonValue v = e.eval(scope);
                if (v != null) {
                    out.put(name, v);
                }
            });
            return out;
        };
    }

    private Expr operator(String op, BsonValue operand) {
        if (op.equals("$literal")) {
            return scope -> operand;
        }
        if (op.equals("$let")) {
            return let(operand);
        }
        for (Family f : FAMILIES) {
            Expr e = f.compile(op, operand, this);
            if (e != null) {
                return e;
            }
        }
        throw new NotEvaluable("the expression operator " + op);
    }

    /** {$let: {vars: {name: expression}, in: expression}}: the vars evaluated in the outer scope. */
    private Expr let(BsonValue operand) {
        BsonDocument spec = Fields.of("$let", operand, Set.of("vars", "in"), Set.of("vars", "in"));
        if (!spec.isDocument("vars")) {
            throw new NotEvaluable("$let's vars must be a document");
        }
        Map<String, Expr> vars = new LinkedHashMap<>();
        spec.getDocument("vars").forEach((name, e) -> vars.put(Fields.variableName("$let", name), expr(e)));
        Expr in = binding(vars.keySet().toArray(new String[0])).expr(spec.get("in"));
        return scope -> {
            Scope inner = scope;
            for (Map.Entry<String, Expr> v : vars.entrySet()) {
                inner = inner.with(v.getKey(), v.getValue().eval(scope));
            }
            return in.eval(inner);
        };
    }

    /** An operator family: its Expr for an operator it has, null for one it does not. */
    interface Family {
        Expr compile(String op, BsonValue operand, ExprCompiler c);
    }

    private static final List<Family> FAMILIES = List.of(ArithmeticOperators::compile, ComparisonOperators::compile,
            LogicOperators::compile, StringOperators::compile, TypeOperators::compile, ArrayOperators::compile,
            SetOperators::compile, DateOperators::compile);
}
