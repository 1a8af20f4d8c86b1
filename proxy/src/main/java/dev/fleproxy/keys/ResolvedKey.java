package dev.fleproxy.keys;

import dev.fleproxy.crypto.DataKey;
import java.time.Instant;

/** A key as the KMS described it at one moment: material and algorithm, state, KMS identifier. */
public record ResolvedKey(DataKey key, KeyState state, String kmsUid, Instant fetchedAt) {
    @Override
    public String toString() {
        return key + " " + state + " (KMS object " + kmsUid + ")";
    }
}
