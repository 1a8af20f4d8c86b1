package dev.fleproxy.rewrite.evaluate.expr;

/**
 * Where mongod fails the command on a value ($divide by zero, $add of a string, $toInt of "x"):
 * $convert's onError catches it, like the server's; anything else turns it into the proxy's
 * refusal. Its message names the operator, never a value (values are plaintext).
 */
public final class ExprFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ExprFailure(String message) {
        super(message, null, false, false);
    }
}
