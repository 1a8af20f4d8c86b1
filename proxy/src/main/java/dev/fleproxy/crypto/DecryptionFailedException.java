package dev.fleproxy.crypto;

/**
 * Any envelope that does not decrypt: wrong key, a flipped bit anywhere, truncation, an unknown
 * format byte or suite. Always the same message, so that failures are no oracle.
 */
public final class DecryptionFailedException extends CryptoException {
    private static final long serialVersionUID = 1L;
    public static final String MESSAGE = "decryption failed";

    public DecryptionFailedException() {
        super(MESSAGE);
    }
}
