package dev.fleproxy.protocol;

/**
 * Errors the proxy itself answers with, as MongoDB error replies (ok: 0, errmsg, code,
 * codeName). Codes live in 9720000–9720999, a range MongoDB's own error codes do not use, so a
 * client can tell the proxy's refusals from the server's; the one exception answers a malformed
 * command with the server's own code.
 */
public enum ProxyError {
    /**
     * The server's own code for a command it cannot parse (an unknown update operator), answered
     * by the proxy in the server's words instead of forwarding what it could not examine.
     */
    FAILED_TO_PARSE(9, "FailedToParse"),
    /**
     * The server's own code for a value it rejects (a collation document it cannot use), answered
     * by the proxy in the server's terms when it evaluates the command itself.
     */
    BAD_VALUE(2, "BadValue"),
    /** The upstream (mongos, mongod or the embedded backend) could not be reached. */
    UPSTREAM_UNAVAILABLE(9720001, "FleProxyUpstreamUnavailable"),
    /** The proxy has maxConnections client connections open: this one is answered with this, then closed. */
    TOO_MANY_CONNECTIONS(9720002, "FleProxyTooManyConnections"),
    /** A query predicate, update operator or aggregation stage that cannot work on an encrypted field. */
    UNSUPPORTED_ON_ENCRYPTED_FIELD(9720010, "FleProxyUnsupportedOnEncryptedField"),
    /** A command or opcode the proxy does not carry out for an encrypted collection. */
    UNSUPPORTED_COMMAND(9720011, "FleProxyUnsupportedCommand"),
    /**
     * A query the proxy evaluates itself (a range or sort on an encrypted field) would have it
     * examine more documents than the collection's maxScanDocuments; nothing partial is returned.
     */
    SCAN_BUDGET_EXCEEDED(9720012, "FleProxyScanBudgetExceeded"),
    /** The answer to a query the proxy evaluated does not fit in one reply (16 MiB). */
    EVALUATED_RESULT_TOO_LARGE(9720013, "FleProxyEvaluatedResultTooLarge"),
    /** The collection's key cannot be used: unknown, wrong state, KMS unreachable, wrong algorithm. */
    KEY_UNAVAILABLE(9720020, "FleProxyKeyUnavailable"),
    /** A stored envelope failed authentication (tampered, or encrypted under another key). */
    DECRYPTION_FAILED(9720021, "FleProxyDecryptionFailed"),
    /** A document or message would exceed the server's size limit once encrypted. */
    TOO_LARGE_AFTER_ENCRYPTION(9720030, "FleProxyTooLargeAfterEncryption"),
    /**
     * The connection's identity may not do this with a policy field: see it (mask: deny), use it
     * in a filter, sort or evaluated stage (query), or write it (write). Names namespace, field and
     * identity, never a value.
     */
    FIELD_ACCESS_DENIED(9720040, "FleProxyFieldAccessDenied"),
    /** An authentication the proxy cannot carry: MONGODB-X509 (the proxy terminates the client's TLS). */
    AUTHENTICATION_NOT_SUPPORTED(9720041, "FleProxyAuthenticationNotSupported"),
    /** The audit trail cannot take the request's line (its queue is full, or its file cannot be written). */
    AUDIT_UNAVAILABLE(9720042, "FleProxyAuditUnavailable");

    public static final String PRODUCT = "mongo-fle-proxy";

    private final int code;
    private final String codeName;

    ProxyError(int code, String codeName) {
        this.code = code;
        this.codeName = codeName;
    }

    public int code() {
        return code;
    }

    public String codeName() {
        return codeName;
    }
}
