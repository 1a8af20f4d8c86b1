package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The tags of one field's range index (docs/envelope-format.md, "Range index tags"): the first
 * 16 bytes of HMAC-SHA-256 under a key derived from the collection's key for one collection,
 * field and index kind, HKDF-SHA-256(IKM = the collection key, salt empty, info =
 * "mongo-fle-proxy/range/v1" 0x00 namespace 0x00 field, L = 32), over
 * <ul>
 *   <li>a tree node: 0x01, its level (one byte), its number at that level (the grid position
 *       shifted right by the level, 8 bytes big-endian);</li>
 *   <li>0x02: "other", a value a range may match that has no place on the grid (a number
 *       outside [min, max], NaN, an array);</li>
 *   <li>0x03: "none", a value no numeric range matches (missing, null, a string …): every
 *       document written through the proxy carries its fields' tags, so one without them was
 *       written before the index and is always a candidate.</li>
 * </ul>
 * Without the key a tag tells nothing of the value; equal tags tell the server that two values
 * share a tree node. Thread safe: each thread keeps its own Mac.
 */
public final class RangeTags {
    public static final int TAG_BYTES = 16;
    private static final String INFO = "mongo-fle-proxy/range/v1";
    private static final ThreadLocal<Mac> MACS = ThreadLocal.withInitial(() -> {
        try {
            return Mac.getInstance("HmacSHA256");
        } catch (java.security.GeneralSecurityException e) {
            throw new CryptoException("HMAC-SHA-256 is not available: " + e.getMessage());
        }
    });

    private final SecretKeySpec key;
    private final byte[] other;
    private final byte[] none;

    private RangeTags(byte[] derived) {
        this.key = new SecretKeySpec(derived, "HmacSHA256");
        Arrays.fill(derived, (byte) 0);
        this.other = mac(new byte[] {0x02});
        this.none = mac(new byte[] {0x03});
    }

    /** Derived keys kept, so a write does not run HKDF per document; cleared whole when full. */
    private static final java.util.concurrent.ConcurrentHashMap<String, RangeTags> DERIVED =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final int KEPT = 4096;

    /** The range tags of one field of one collection, under the collection's key. */
    public static RangeTags of(DataKey collectionKey, String namespace, String field) {
        String id = collectionKey.id() + "\0" + namespace + "\0" + field;
        RangeTags t = DERIVED.get(id);
        if (t == null) {
            if (DERIVED.size() >= KEPT) {
                DERIVED.clear();
            }
            t = derive(collectionKey, namespace, field);
            DERIVED.put(id, t);
        }
        return t;
    }

    static RangeTags derive(DataKey collectionKey, String namespace, String field) {
        byte[] info = (INFO + "\0" + namespace + "\0" + field).getBytes(StandardCharsets.UTF_8);
        byte[] material = collectionKey.material();
        try {
            return new RangeTags(Hkdf.sha256(material, new byte[0], info, 32));
        } finally {
            Arrays.fill(material, (byte) 0);
        }
    }

    /** The tag of the tree node at this level holding this grid position. */
    public byte[] node(int level, long position) {
        byte[] in = new byte[10];
        in[0] = 0x01;
        in[1] = (byte) level;
        long n = position >>> level;
        for (int i = 0; i < 8; i++) {
            in[2 + i] = (byte) (n >>> (56 - 8 * i));
        }
        return mac(in);
    }

    public byte[] other() {
        return other.clone();
    }

    public byte[] none() {
        return none.clone();
    }

    private byte[] mac(byte[] in) {
        Mac m = MACS.get();
        try {
            m.init(key);
        } catch (java.security.InvalidKeyException e) {
            throw new CryptoException("the range tag key was refused: " + e.getMessage());
        }
        return Arrays.copyOf(m.doFinal(in), TAG_BYTES);
    }
}
