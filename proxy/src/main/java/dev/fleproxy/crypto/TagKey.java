package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key of one kind of search tag for one field of one collection (docs/envelope-format.md,
 * "Search index tags"): HKDF-SHA-256(IKM = the collection key, salt empty, info =
 * "mongo-fle-proxy/" kind "/v1" 0x00 namespace 0x00 field, L = 32); a tag is the first 16 bytes of
 * HMAC-SHA-256 under it. Derived keys are kept, so a write does not run HKDF per document.
 * Thread safe: each thread keeps its own Mac.
 */
public final class TagKey {
    public static final int TAG_BYTES = 16;
    private static final int KEPT = 4096;
    private static final ConcurrentHashMap<String, TagKey> DERIVED = new ConcurrentHashMap<>();
    private static final ThreadLocal<Mac> MACS = ThreadLocal.withInitial(() -> {
        try {
            return Mac.getInstance("HmacSHA256");
        } catch (java.security.GeneralSecurityException e) {
            throw new CryptoException("HMAC-SHA-256 is not available: " + e.getMessage());
        }
    });

    private final SecretKeySpec key;
    /** The tags of 0x02 ("other") and 0x03 ("none"), made once with the key: every write asks for them. */
    private final byte[] other;
    private final byte[] none;

    private TagKey(byte[] derived) {
        this.key = new SecretKeySpec(derived, "HmacSHA256");
        Arrays.fill(derived, (byte) 0);
        this.other = tag(new byte[] {0x02});
        this.none = tag(new byte[] {0x03});
    }

    /** The key of this kind ("range", "prefix", "suffix", "substring") for a field of a collection, under the collection's key. */
    static TagKey of(DataKey collectionKey, String kind, String namespace, String field) {
        String id = kind + "\0" + collectionKey.id() + "\0" + namespace + "\0" + field;
        TagKey k = DERIVED.get(id);
        if (k == null) {
            if (DERIVED.size() >= KEPT) {
                DERIVED.clear();
            }
            k = derive(collectionKey, kind, namespace, field);
            DERIVED.put(id, k);
        }
        return k;
    }

    static TagKey derive(DataKey collectionKey, String kind, String namespace, String field) {
        byte[] info = ("mongo-fle-proxy/" + kind + "/v1\0" + namespace + "\0" + field).getBytes(StandardCharsets.UTF_8);
        byte[] material = collectionKey.material();
        try {
            return new TagKey(Hkdf.sha256(material, new byte[0], info, 32));
        } finally {
            Arrays.fill(material, (byte) 0);
        }
    }

    /** The tag of a one-byte message; that of 0x02 or 0x03 is the one made with the key (the caller must not change it). */
    byte[] tagOfByte(byte b) {
        if (b == 0x02) {
            return other;
        }
        if (b == 0x03) {
            return none;
        }
        return tag(new byte[] {b});
    }

    /** The tag of a message. */
    byte[] tag(byte[] message) {
        Mac m = MACS.get();
        try {
            m.init(key);
        } catch (java.security.InvalidKeyException e) {
            throw new CryptoException("a search tag key was refused: " + e.getMessage());
        }
        return Arrays.copyOf(m.doFinal(message), TAG_BYTES);
    }
}
