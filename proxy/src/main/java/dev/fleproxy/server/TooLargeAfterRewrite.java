package dev.fleproxy.server;

/** A rewritten message over the 48,000,000-byte limit: refused rather than sent. */
final class TooLargeAfterRewrite extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int size;

    TooLargeAfterRewrite(int size) {
        super(null, null, false, false);
        this.size = size;
    }
}
