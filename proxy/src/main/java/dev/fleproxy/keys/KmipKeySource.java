package dev.fleproxy.keys;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CryptoException;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.kmip.KmipEnum;
import dev.fleproxy.kmip.KmipException;
import dev.fleproxy.kmip.KmipMessages;
import dev.fleproxy.kmip.Ttlv;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Keys from a KMIP server, named by UUID (docs/keys.md, "Keys over KMIP"): Locate(Name) → unique identifier
 * (narrowed to State=Active when several objects carry the name), Get → material, algorithm and
 * length, GetAttributes → state (and the LEA marking, see {@link KmipAlgorithms}).
 */
public final class KmipKeySource implements KeySource {
    private final KmipClient client;
    private final Clock clock;

    public KmipKeySource(KmipClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    @Override
    public String describe() {
        return "KMS " + client.address();
    }

    @Override
    public ResolvedKey fetch(UUID id) {
        try {
            String uid = locate(id);
            KmipMessages.KeyBlock block = client.get(uid);
            Map<String, List<Ttlv>> attrs = client.getAttributes(uid, KmipMessages.ATTR_STATE,
                    KmipAlgorithms.MARKER_ATTRIBUTE);
            List<Ttlv> state = attrs.get(KmipMessages.ATTR_STATE);
            if (state == null || state.isEmpty()) {
                throw new KeyAccessException(id, KeyAccessException.Reason.KMS_ERROR,
                        describe() + " returned no State for key " + id);
            }
            CipherAlgorithm alg = KmipAlgorithms.algorithmOf(id, block.algorithm(), attrs.get(KmipAlgorithms.MARKER_ATTRIBUTE));
            byte[] material = block.material();
            try {
                if (block.length() >= 0 && block.length() != material.length * 8) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.UNSUPPORTED_KEY, "key " + id
                            + " declares " + block.length() + " bits but holds " + material.length * 8);
                }
                DataKey key = new DataKey(id, alg, material);
                return new ResolvedKey(key, KeyState.fromKmip(state.get(0).intValue()), uid, clock.instant());
            } catch (CryptoException e) {
                throw new KeyAccessException(id, KeyAccessException.Reason.UNSUPPORTED_KEY, e.getMessage());
            } finally {
                Arrays.fill(material, (byte) 0);
            }
        } catch (KmipException e) {
            if (e.resultStatus() == null) {
                throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, e.getMessage(), e);
            }
            throw new KeyAccessException(id, KeyAccessException.Reason.KMS_ERROR,
                    describe() + " refused key " + id + ": " + e.getMessage(), e);
        }
    }

    private String locate(UUID id) {
        String name = id.toString();
        List<String> uids = client.locateByName(name, null);
        if (uids.isEmpty()) {
            throw new KeyAccessException(id, KeyAccessException.Reason.UNKNOWN_KEY, "no key named " + id + " in "
                    + describe() + " (never created, destroyed, or not visible to this client's certificate)");
        }
        if (uids.size() == 1) {
            return uids.get(0);
        }
        List<String> active = client.locateByName(name, KmipEnum.STATE_ACTIVE);
        if (active.size() == 1) {
            return active.get(0);
        }
        throw new KeyAccessException(id, KeyAccessException.Reason.DUPLICATE_NAME, uids.size() + " keys in "
                + describe() + " are named " + id + " (" + active.size() + " of them Active: objects " + uids
                + "); refusing to guess which one encrypts this collection");
    }
}
