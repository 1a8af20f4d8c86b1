package dev.fleproxy.keys;

import java.util.UUID;

/** Why a key cannot be used right now, precisely; never carries key material. */
public final class KeyAccessException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The kinds of failure, each with its own error code toward clients. */
    public enum Reason {
        /** No key of that name in the KMS (never created, or destroyed). */
        UNKNOWN_KEY,
        /** Several keys carry the name and it is not clear which one is meant. */
        DUPLICATE_NAME,
        /** The key exists but its state forbids this use (Pre-Active, Deactivated for encryption, …). */
        WRONG_STATE,
        /** An algorithm, length or format no suite supports. */
        UNSUPPORTED_KEY,
        /** The KMS cannot be reached and no usable cached copy remains. */
        KMS_UNAVAILABLE,
        /** The KMS answered with an error (permission denied, …). */
        KMS_ERROR
    }

    private final UUID keyId;
    private final Reason reason;

    public KeyAccessException(UUID keyId, Reason reason, String message) {
        this(keyId, reason, message, null);
    }

    public KeyAccessException(UUID keyId, Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.keyId = keyId;
        this.reason = reason;
    }

    public UUID keyId() {
        return keyId;
    }

    public Reason reason() {
        return reason;
    }

    /** Definitive answers from the KMS, as opposed to failing to reach it. */
    public boolean isDefinitive() {
        return reason != Reason.KMS_UNAVAILABLE;
    }
}
