package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;

/**
 * The pseudonym mask (docs/access.md): "pn1:" and 24 base64url characters, the first 144 bits of
 * HMAC-SHA-256 over the value's BSON type byte and bytes, under a key derived from the
 * collection's key for one field: HKDF-SHA-256(IKM = the collection key, salt empty, info =
 * "mongo-fle-proxy/pseudonym/v1" 0x00 namespace 0x00 field, L = 32). Equal values of a field give
 * equal pseudonyms while the collection's key stays the same (joins and counts work on them);
 * without the key, a pseudonym tells nothing of the value, and it is never reversed.
 */
public final class Pseudonyms {
    private static final String INFO = "mongo-fle-proxy/pseudonym/v1";
    private static final int BYTES = 18;

    private final Mac mac;

    private Pseudonyms(Mac mac) {
        this.mac = mac;
    }

    /** The pseudonyms of one field of one collection, under the collection's key. */
    public static Pseudonyms of(DataKey collectionKey, String namespace, String field) {
        byte[] info = (INFO + "\0" + namespace + "\0" + field).getBytes(StandardCharsets.UTF_8);
        return new Pseudonyms(Hkdf.hmacSha256(collectionKey, info));
    }

    /** The pseudonym of a value of this BSON type with these value bytes. */
    public String of(byte bsonType, byte[] value) {
        mac.update(bsonType);
        byte[] h = mac.doFinal(value);
        return "pn1:" + Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(h, BYTES));
    }
}
