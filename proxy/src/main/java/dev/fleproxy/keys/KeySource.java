package dev.fleproxy.keys;

import java.util.UUID;

/** Where keys come from: the KMS. Every call is a round trip; {@link KeyResolver} caches. */
public interface KeySource {

    /**
     * The key named by this UUID, whatever its state. Throws {@link KeyAccessException} with
     * reason KMS_UNAVAILABLE when the KMS cannot be reached, another reason when it answered.
     */
    ResolvedKey fetch(UUID id);

    /** Where the keys come from, for messages ("KMS 127.0.0.1:5696"). */
    String describe();
}
