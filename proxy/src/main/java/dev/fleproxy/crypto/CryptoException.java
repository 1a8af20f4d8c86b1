package dev.fleproxy.crypto;

/**
 * Every failure of the crypto layer: a key that does not fit its suite, an envelope that cannot
 * be decrypted. Messages never contain key bytes or values; callers add the namespace and field.
 */
public class CryptoException extends RuntimeException {
    // Same two constructors as ConfigException, WireProtocolException on purpose: one exception type per layer, no
    // shared base, so the lowest layers stay independent of each other.
    private static final long serialVersionUID = 1L;

    public CryptoException(String message) {
        super(message);
    }

    public CryptoException(String message, Throwable cause) {
        super(message, cause);
    }
}
