package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.DecryptionFailedException;
import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.server.ProxyError;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Decrypts every envelope in documents returned for an encrypted collection, wherever it sits (a
 * pipeline may have copied it to another name), under the key its header names. Values that are
 * not envelopes — stored before a policy existed, or never encrypted — are returned as they are.
 * An envelope that fails authentication fails the whole reply: never garbage.
 */
final class ReplyDecryptor {
    private final Keyring keyring;
    private final String ns;

    ReplyDecryptor(Keyring keyring, String ns) {
        this.keyring = keyring;
        this.ns = ns;
    }

    /** The document with its envelopes decrypted; the same object if it held none. */
    BsonDocument document(BsonDocument doc, String path) {
        BsonDocument out = null;
        int i = 0;
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            BsonValue v = e.getValue();
            BsonValue nv = value(v, path.isEmpty() ? e.getKey() : path + "." + e.getKey());
            if (nv != v && out == null) {
                out = new BsonDocument();
                int j = 0;
                for (Map.Entry<String, BsonValue> before : doc.entrySet()) {
                    if (j++ == i) {
                        break;
                    }
                    out.append(before.getKey(), before.getValue());
                }
            }
            if (out != null) {
                out.append(e.getKey(), nv);
            }
            i++;
        }
        return out == null ? doc : out;
    }

    BsonValue value(BsonValue v, String path) {
        switch (v.getBsonType()) {
            case BINARY: {
                byte[] env = EnvelopeBinary.unwrap(v);
                return env == null ? v : decrypt(env, path);
            }
            case DOCUMENT:
                return document(v.asDocument(), path);
            case ARRAY: {
                BsonArray in = v.asArray();
                BsonArray out = null;
                for (int i = 0; i < in.size(); i++) {
                    BsonValue el = in.get(i);
                    BsonValue nel = value(el, path);
                    if (nel != el && out == null) {
                        out = new BsonArray(in.size());
                        for (int j = 0; j < i; j++) {
                            out.add(in.get(j));
                        }
                    }
                    if (out != null) {
                        out.add(nel);
                    }
                }
                return out == null ? v : out;
            }
            default:
                return v;
        }
    }

    private BsonValue decrypt(byte[] envelope, String path) {
        try {
            Envelope.Header h = Envelope.parse(envelope);
            FieldCipher fc = keyring.forDecryption(h, ns);
            FieldCipher.Plaintext p = fc.decrypt(envelope);
            return new BsonValueBytes(p.bsonType(), p.value()).toBsonValue();
        } catch (DecryptionFailedException e) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": decryption failed for field '" + path
                    + "' of a returned document (tampered, or not encrypted by this proxy's keys)");
        } catch (org.bson.BSONException | IllegalArgumentException e) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": field '" + path + "' decrypted to no valid BSON value");
        }
    }

    /** Decrypts each document of a cursor batch or value list. */
    BsonArray array(BsonArray docs) {
        BsonValue out = value(docs, "");
        return out.asArray();
    }

    /** The reply body of find/aggregate/getMore/findAndModify/distinct with its documents decrypted, or null if unchanged. */
    BsonDocument reply(BsonDocument body) {
        if (body.containsKey("cursor") && body.get("cursor").isDocument()) {
            BsonDocument cursor = body.getDocument("cursor");
            for (String batchName : new String[] {"firstBatch", "nextBatch"}) {
                if (cursor.containsKey(batchName) && cursor.get(batchName).isArray()) {
                    BsonArray batch = cursor.getArray(batchName);
                    BsonArray dec = array(batch);
                    if (dec == batch) {
                        return null;
                    }
                    BsonDocument c2 = copyWith(cursor, batchName, dec);
                    return copyWith(body, "cursor", c2);
                }
            }
            return null;
        }
        for (String field : new String[] {"value", "values"}) {
            if (body.containsKey(field)) {
                BsonValue v = body.get(field);
                BsonValue dec = value(v, field.equals("value") ? "" : "values");
                return dec == v ? null : copyWith(body, field, dec);
            }
        }
        return null;
    }

    /**
     * The document with one value replaced. By key, not by entry: a raw reply's entries would
     * decode the batch being replaced a second time; get() of the others only skips over it.
     */
    private static BsonDocument copyWith(BsonDocument doc, String key, BsonValue value) {
        BsonDocument out = new BsonDocument();
        for (String k : doc.keySet()) {
            out.append(k, k.equals(key) ? value : doc.get(k));
        }
        return out;
    }
}
