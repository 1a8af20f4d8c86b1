package dev.fleproxy.rewrite.read;

import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Pseudonyms;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldAccess;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * What one identity gets instead of the plaintext of the policy fields it may not see
 * (docs/access.md): the masks of one collection's fields for one connection's identity, applied
 * to a decrypted value's BSON type and bytes. {@link #NONE} when every field is revealed to it.
 */
public final class FieldMasks {
    static final byte NULL = 0x0A;
    static final byte STRING = 0x02;
    public static final FieldMasks NONE = new FieldMasks(null, null, Map.of(), null);
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();
    /** Where a denied field stood in a decoded document: no application value begins so (random per process). */
    private static final String DENIED = "\0fle-proxy-denied:" + java.util.HexFormat.of().formatHex(
            secureRandomBytes()) + ":";

    private static byte[] secureRandomBytes() {
        byte[] b = new byte[12];
        new java.security.SecureRandom().nextBytes(b);
        return b;
    }

    /** A masked value: its BSON type and value bytes. */
    public record Masked(byte type, byte[] value) {
    }

    private final String ns;
    private final String identity;
    /** The policy fields this identity may not see, by path, with what it gets instead. */
    private final Map<String, FieldAccess.Mask> masked;
    private final Map<String, Integer> keep = new HashMap<>();
    private final CollectionKeys keys;
    private final Map<String, Pseudonyms> pseudonyms = new HashMap<>();
    private final CollectionPolicy policy;

    private FieldMasks(CollectionPolicy policy, String identity, Map<String, FieldAccess.Mask> masked,
                       CollectionKeys keys) {
        this.policy = policy;
        this.ns = policy == null ? null : policy.namespace();
        this.identity = identity;
        this.masked = masked;
        this.keys = keys;
    }

    /** The masks of this collection's fields for this identity (keys: for pseudonyms, in memory already). */
    public static FieldMasks of(CollectionPolicy p, String identity, CollectionKeys keys) {
        Map<String, FieldAccess.Mask> masked = new HashMap<>();
        FieldMasks out = null;
        for (FieldRule r : p.fields().values()) {
            FieldAccess.Mask m = r.access().maskFor(identity);
            if (m != null) {
                if (out == null) {
                    out = new FieldMasks(p, identity, masked, keys.about(p.namespace()));
                }
                masked.put(r.path(), m);
                out.keep.put(r.path(), r.access().keep());
            }
        }
        return out == null ? new FieldMasks(p, identity, Map.of(), null) : out; // none masked; the identity kept
    }

    public boolean any() {
        return !masked.isEmpty();
    }

    /** True if this policy field is masked for the identity. */
    public boolean masks(String field) {
        return field != null && masked.containsKey(field);
    }

    /** The identity the masks are for. */
    public String identity() {
        return identity;
    }

    /** What the identity gets for this field's decrypted value; a refusal (9720040) for deny. */
    public Masked apply(String field, byte type, byte[] value) {
        return switch (masked.get(field)) {
            case DENY -> throw denied(field);
            case REDACT -> new Masked(NULL, new byte[0]);
            case PARTIAL -> type == STRING ? new Masked(STRING, string(partial(text(value), keep.get(field))))
                    : new Masked(NULL, new byte[0]);
            case PSEUDONYM -> new Masked(STRING, string(pseudonyms(field).of(type, value)));
        };
    }

    /**
     * The masks applied to decoded documents (what the proxy evaluates itself): each masked field,
     * wherever the document holds it, replaced by what the identity gets; a denied one by a marker
     * naming it, which {@link #refuseDenied} finds if it reaches the answer.
     */
    public BsonDocument applyTo(BsonDocument doc) {
        BsonDocument out = doc.clone();
        for (String field : masked.keySet()) {
            replace(out, field.split("\\."), 0, field);
        }
        return out;
    }

    private void replace(BsonDocument doc, String[] path, int i, String field) {
        BsonValue v = doc.get(path[i]);
        if (v == null) {
            return;
        }
        if (i == path.length - 1) {
            doc.put(path[i], masked(field, v));
        } else if (v.isDocument()) {
            replace(v.asDocument(), path, i + 1, field);
        } else if (v.isArray()) {
            for (BsonValue e : v.asArray()) {
                if (e.isDocument()) {
                    replace(e.asDocument(), path, i + 1, field); // array indexes are passed over, as in policy paths
                }
            }
        }
    }

    private BsonValue masked(String field, BsonValue v) {
        return switch (masked.get(field)) {
            case DENY -> new BsonString(DENIED + field);
            case REDACT -> BsonNull.VALUE;
            case PARTIAL -> v.isString() ? new BsonString(partial(v.asString().getValue(), keep.get(field))) : BsonNull.VALUE;
            case PSEUDONYM -> {
                RawBsonDocument raw = new RawBsonDocument(new BsonDocument("v", v), CODEC);
                byte[] all = raw.getByteBuffer().array();
                int start = raw.getByteBuffer().arrayOffset() + 4 + 1 + 2; // length, type, "v\0"
                int end = raw.getByteBuffer().arrayOffset() + raw.getByteBuffer().remaining() - 1;
                yield new BsonString(pseudonyms(field).of((byte) v.getBsonType().getValue(),
                        java.util.Arrays.copyOfRange(all, start, end)));
            }
        };
    }

    /** Refuses (9720040) an answer holding a denied field's marker, anywhere in its documents. */
    public void refuseDenied(Iterable<? extends BsonValue> answer) {
        for (BsonValue v : answer) {
            String field = deniedIn(v, 0);
            if (field != null) {
                throw denied(field);
            }
        }
    }

    private static String deniedIn(BsonValue v, int depth) {
        if (v.isString() && v.asString().getValue().startsWith(DENIED)) {
            return v.asString().getValue().substring(DENIED.length());
        }
        Iterable<BsonValue> children = v.isDocument() ? v.asDocument().values() : v.isArray() ? v.asArray() : null;
        if (children != null && depth < 200) {
            for (BsonValue c : children) {
                String f = deniedIn(c, depth + 1);
                if (f != null) {
                    return f;
                }
            }
        }
        return null;
    }

    /** The refusal of a request that would return this field to an identity whose mask is deny. */
    public Refusal denied(String field) {
        return new Refusal(ProxyError.FIELD_ACCESS_DENIED, ns + ": field '" + field + "' may not be returned to "
                + "identity '" + identity + "' (mask: deny); leave it out of the projection, or connect as an "
                + "identity its reveal: names");
    }

    private Pseudonyms pseudonyms(String field) {
        return pseudonyms.computeIfAbsent(field, f -> {
            DataKey k = keys.decryptionKey(policy.keyId());
            if (k == null) {
                throw new Refusal(ProxyError.KEY_UNAVAILABLE, ns + ": the collection's key, which pseudonyms of '"
                        + f + "' are derived from, is not available");
            }
            return Pseudonyms.of(k, ns, f);
        });
    }

    /**
     * The last {@code keep} characters kept; before them letters and digits become '*' and the rest
     * (separators) stay, so "123-45-6789" becomes "***-**-6789": the length and format show.
     */
    static String partial(String s, int keep) {
        int[] cps = s.codePoints().toArray();
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < cps.length; i++) {
            boolean kept = i >= cps.length - keep || !Character.isLetterOrDigit(cps[i]);
            b.appendCodePoint(kept ? cps[i] : '*');
        }
        return b.toString();
    }

    private static String text(byte[] value) {
        int len = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getInt();
        return new String(value, 4, len - 1, StandardCharsets.UTF_8);
    }

    private static byte[] string(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + utf8.length + 1).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(utf8.length + 1).put(utf8).put((byte) 0);
        return b.array();
    }
}
