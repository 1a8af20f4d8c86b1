package dev.fleproxy.kmip;

/**
 * A KMIP failure: a server's error (result status, reason and message as it sent them), or a
 * transport or encoding problem (status null). Never carries key material.
 */
public class KmipException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String resultStatus;
    private final String resultReason;

    public KmipException(String message) {
        this(message, null, null, null);
    }

    public KmipException(String message, Throwable cause) {
        this(message, null, null, cause);
    }

    public KmipException(String message, String resultStatus, String resultReason, Throwable cause) {
        super(message, cause);
        this.resultStatus = resultStatus;
        this.resultReason = resultReason;
    }

    /** OPERATION_FAILED, …; null when the failure was not an answer from the server. */
    public String resultStatus() {
        return resultStatus;
    }

    /** ITEM_NOT_FOUND, PERMISSION_DENIED, …; null when the server gave none. */
    public String resultReason() {
        return resultReason;
    }

    /** True when the server could not be reached or the connection broke (worth retrying later). */
    public boolean isTransportFailure() {
        return resultStatus == null && getCause() instanceof java.io.IOException;
    }
}
