package dev.fleproxy.rewrite.evaluate;

/**
 * Thrown when the evaluator cannot reproduce MongoDB's semantics exactly: an operator it does not
 * support, a shape the server would reject, or a construct whose meaning is too intricate to
 * reproduce (a regular expression whose PCRE and Java meanings may differ, a sort across parallel
 * arrays). The message names the operator and why. Thrown by the compile methods; the only thrown
 * at evaluation time is DocumentSort's, on a document whose sort key the server would refuse too.
 */
public final class NotEvaluable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NotEvaluable(String message) {
        super(message);
    }
}
