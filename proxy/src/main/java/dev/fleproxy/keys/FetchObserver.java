package dev.fleproxy.keys;

/** Told of every KMS round trip for a key (the metrics): what for, how it ended, how long it took. */
public interface FetchObserver {
    /**
     * @param operation "fetch" (a key the data path or a start-up needed) or "refresh" (in the background)
     * @param result "ok", or the failure's reason in lower case (kms_unavailable, unknown_key, …)
     */
    void fetched(String operation, String result, long nanos);
}
