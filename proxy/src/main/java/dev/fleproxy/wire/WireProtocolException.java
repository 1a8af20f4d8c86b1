package dev.fleproxy.wire;

/**
 * A message that violates the wire protocol (bad length, truncated section, bad checksum, …).
 * The connection that sent it cannot be trusted to stay in frame, so it is closed; the message
 * says why in words fit for one log line and never contains document contents.
 */
public class WireProtocolException extends RuntimeException {
    // Same two constructors as ConfigException, CryptoException on purpose: one exception type per layer, no
    // shared base, so the lowest layers stay independent of each other.
    private static final long serialVersionUID = 1L;

    public WireProtocolException(String message) {
        super(message);
    }

    public WireProtocolException(String message, Throwable cause) {
        super(message, cause);
    }
}
