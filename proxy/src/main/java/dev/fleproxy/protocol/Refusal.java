package dev.fleproxy.protocol;

/**
 * A command the proxy will not forward because it cannot be carried out correctly on encrypted
 * data (or its keys are unavailable). Becomes a MongoDB error reply; never carries a value.
 */
public final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ProxyError error;

    public Refusal(ProxyError error, String message) {
        super(message, null, false, false);
        this.error = error;
    }

    public ProxyError error() {
        return error;
    }

    public static Refusal onField(String ns, String field, String what) {
        return new Refusal(ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, ns + ": refused " + what + " on encrypted field '"
                + field + "'");
    }

    public static Refusal command(String ns, String what) {
        return new Refusal(ProxyError.UNSUPPORTED_COMMAND, ns + ": " + what);
    }
}
