package dev.fleproxy.rewrite.evaluate.expr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** Evaluates {e: expression} on a document given as JSON and compares with the server's answer. */
final class ExprAssert {
    private ExprAssert() {
    }

    static BsonValue eval(String expression, String doc) {
        BsonValue e = BsonDocument.parse("{e: " + expression + "}").get("e");
        return ExprCompiler.compile(e).eval(Scope.of(BsonDocument.parse(doc)));
    }

    /** expected: JSON of the value, or "missing". */
    static void is(String expected, String expression, String doc) {
        BsonValue got = eval(expression, doc);
        if (expected.equals("missing")) {
            assertEquals(null, got, expression);
        } else {
            assertEquals(BsonDocument.parse("{v: " + expected + "}").get("v"), got, expression);
        }
    }

    static void is(String expected, String expression) {
        is(expected, expression, "{}");
    }

    /** mongod fails the command here. */
    static void fails(String expression, String doc) {
        assertThrows(ExprFailure.class, () -> eval(expression, doc), expression);
    }

    /** The proxy refuses: not supported, or not reproduced exactly. */
    static void refused(String expression, String doc) {
        assertThrows(NotEvaluable.class, () -> eval(expression, doc), expression);
    }
}
