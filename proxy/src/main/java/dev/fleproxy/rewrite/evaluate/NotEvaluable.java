package dev.fleproxy.rewrite.evaluate;

/**
 * Thrown when the evaluator cannot reproduce MongoDB's semantics exactly: an operator it does not
 * support, a shape the server would reject, or a construct whose meaning is too intricate to
 * reproduce (a regular expression whose PCRE and Java meanings may differ, a sort across parallel
 * arrays). The message names the operator and why. Thrown by the compile methods; at evaluation
 * time only for a document the server would fail on too (a sort across parallel arrays), one whose
 * answer differs between server versions (null against the deprecated undefined), or a regex that
 * exhausts Java's stack on a value.
 */
public final class NotEvaluable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NotEvaluable(String message) {
        super(message);
    }
}
