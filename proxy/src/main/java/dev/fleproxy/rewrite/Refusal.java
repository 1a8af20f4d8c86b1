package dev.fleproxy.rewrite;

import dev.fleproxy.protocol.ProxyError;

/**
 * A command the proxy will not forward because it cannot be carried out correctly on encrypted
 * data (or its keys are unavailable). Becomes a MongoDB error reply; never carries a value.
 */
final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ProxyError error;

    Refusal(ProxyError error, String message) {
        super(message, null, false, false);
        this.error = error;
    }

    ProxyError error() {
        return error;
    }

    static Refusal onField(String ns, String field, String what) {
        return new Refusal(ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, ns + ": refused " + what + " on encrypted field '"
                + field + "'");
    }

    static Refusal command(String ns, String what) {
        return new Refusal(ProxyError.UNSUPPORTED_COMMAND, ns + ": " + what);
    }
}
