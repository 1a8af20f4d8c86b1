package dev.fleproxy.keys;

import dev.fleproxy.crypto.DataKey;
import java.time.Instant;

/** A key as the KMS described it at one moment: material and algorithm, state, KMS identifier. */
public record ResolvedKey(DataKey key, KeyState state, String kmsUid, Instant fetchedAt) {
    /** This key, if its state lets it encrypt ({@code encrypt}) or decrypt; else why not. */
    public ResolvedKey usableTo(boolean encrypt) {
        String refusal = state.refusal(encrypt);
        if (refusal != null) {
            throw new KeyAccessException(key.id(), KeyAccessException.Reason.WRONG_STATE, "key " + key.id() + " "
                    + refusal + state.hint());
        }
        return this;
    }

    @Override
    public String toString() {
        return key + " " + state + " (KMS object " + kmsUid + ")";
    }
}
