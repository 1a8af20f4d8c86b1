package dev.fleproxy.keys;

/**
 * A message needs a key the cache does not hold yet: it waits (the filter answers with an await
 * decision), it is not refused. Thrown where the need is found, caught by the filter.
 */
public final class KeysPending extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KeysPending() {
        super(null, null, false, false);
    }
}
