package dev.fleproxy.server;

/**
 * Errors the proxy itself answers with, as MongoDB error replies (ok: 0, errmsg, code,
 * codeName). Codes live in 9720000–9720999, a range MongoDB's own error codes do not use, so a
 * client can tell the proxy's refusals from the server's.
 */
public enum ProxyError {
    /** The upstream (mongos, mongod or the embedded backend) could not be reached. */
    UPSTREAM_UNAVAILABLE(9720001, "FleProxyUpstreamUnavailable");

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
