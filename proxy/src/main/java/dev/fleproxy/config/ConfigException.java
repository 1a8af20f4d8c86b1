package dev.fleproxy.config;

/** A configuration file that cannot be used as written; the message says which key and why. */
public class ConfigException extends RuntimeException {
    // Same two constructors as CryptoException, WireProtocolException on purpose: one exception type per layer, no
    // shared base, so the lowest layers stay independent of each other.
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
