package dev.fleproxy.kmip;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Requests and responses of the three operations key resolution needs — Locate by Name (and
 * State), Get, GetAttributes — in KMIP 1.x encoding (the attribute-list form PyKMIP's client sends
 * at 1.2 and 1.4; byte-for-byte equal to the captured vectors).
 */
public final class KmipMessages {
    public static final String ATTR_NAME = "Name";
    public static final String ATTR_STATE = "State";
    public static final String ATTR_ALGORITHM = "Cryptographic Algorithm";
    public static final String ATTR_LENGTH = "Cryptographic Length";

    private KmipMessages() {
    }

    /** A protocol version this client speaks. */
    public record Version(int major, int minor) {
        public static final Version V1_2 = new Version(1, 2);
        public static final Version V1_4 = new Version(1, 4);

        public Version {
            if (major != 1 || minor < 0 || minor > 4) {
                throw new IllegalArgumentException("KMIP " + major + "." + minor + " is not supported; use 1.0-1.4");
            }
        }
    }

    static Ttlv request(Version v, int operation, Ttlv payload) {
        return Ttlv.structure(Tag.REQUEST_MESSAGE,
                Ttlv.structure(Tag.REQUEST_HEADER,
                        Ttlv.structure(Tag.PROTOCOL_VERSION,
                                Ttlv.integer(Tag.PROTOCOL_VERSION_MAJOR, v.major()),
                                Ttlv.integer(Tag.PROTOCOL_VERSION_MINOR, v.minor())),
                        Ttlv.integer(Tag.BATCH_COUNT, 1)),
                Ttlv.structure(Tag.BATCH_ITEM,
                        Ttlv.enumeration(Tag.OPERATION, operation),
                        payload));
    }

    private static Ttlv attribute(String name, Ttlv value) {
        return Ttlv.structure(Tag.ATTRIBUTE, Ttlv.text(Tag.ATTRIBUTE_NAME, name), value);
    }

    /** Locate objects whose Name is this text, optionally only those in a given state. */
    public static Ttlv locateByName(Version v, String name, Integer state) {
        List<Ttlv> attrs = new ArrayList<>();
        attrs.add(attribute(ATTR_NAME, Ttlv.structure(Tag.ATTRIBUTE_VALUE,
                Ttlv.text(Tag.NAME_VALUE, name),
                Ttlv.enumeration(Tag.NAME_TYPE, KmipEnum.NAME_UNINTERPRETED_TEXT))));
        if (state != null) {
            attrs.add(attribute(ATTR_STATE, Ttlv.enumeration(Tag.ATTRIBUTE_VALUE, state)));
        }
        return request(v, KmipEnum.OP_LOCATE, Ttlv.structure(Tag.REQUEST_PAYLOAD, attrs));
    }

    public static Ttlv get(Version v, String uid) {
        return request(v, KmipEnum.OP_GET,
                Ttlv.structure(Tag.REQUEST_PAYLOAD, Ttlv.text(Tag.UNIQUE_IDENTIFIER, uid)));
    }

    public static Ttlv getAttributes(Version v, String uid, String... names) {
        List<Ttlv> items = new ArrayList<>();
        items.add(Ttlv.text(Tag.UNIQUE_IDENTIFIER, uid));
        for (String n : names) {
            items.add(Ttlv.text(Tag.ATTRIBUTE_NAME, n));
        }
        return request(v, KmipEnum.OP_GET_ATTRIBUTES, Ttlv.structure(Tag.REQUEST_PAYLOAD, items));
    }

    /**
     * The payload of a one-item response, or a {@link KmipException} carrying the server's
     * result status, reason and message.
     */
    public static Ttlv payload(Ttlv response, int expectedOperation) {
        if (response.tag() != Tag.RESPONSE_MESSAGE) {
            throw new KmipException("expected a KMIP RESPONSE_MESSAGE, got " + Tag.name(response.tag()));
        }
        Ttlv item = response.get(Tag.BATCH_ITEM);
        Ttlv op = item.find(Tag.OPERATION);
        int status = item.get(Tag.RESULT_STATUS).intValue();
        if (status != KmipEnum.RESULT_SUCCESS) {
            Ttlv reason = item.find(Tag.RESULT_REASON);
            Ttlv message = item.find(Tag.RESULT_MESSAGE);
            String r = reason == null ? null : KmipEnum.resultReason(reason.intValue());
            String m = message == null ? "" : message.textValue();
            throw new KmipException("KMS answered " + KmipEnum.resultStatus(status) + (r == null ? "" : "/" + r)
                    + (m.isEmpty() ? "" : ": " + m), KmipEnum.resultStatus(status), r, null);
        }
        if (op != null && op.intValue() != expectedOperation) {
            throw new KmipException("KMS answered operation " + op.intValue() + " to operation " + expectedOperation);
        }
        Ttlv payload = item.find(Tag.RESPONSE_PAYLOAD);
        return payload != null ? payload : Ttlv.structure(Tag.RESPONSE_PAYLOAD);
    }

    public static List<String> locatedIds(Ttlv response) {
        List<String> ids = new ArrayList<>();
        for (Ttlv t : payload(response, KmipEnum.OP_LOCATE).all(Tag.UNIQUE_IDENTIFIER)) {
            ids.add(t.textValue());
        }
        return ids;
    }

    /** What Get returns for a symmetric key in Raw format. */
    public record KeyBlock(int algorithm, int length, byte[] material) {
        @Override
        public String toString() {
            return "KeyBlock(algorithm " + algorithm + ", " + length + " bits)";
        }
    }

    public static KeyBlock symmetricKey(Ttlv response) {
        Ttlv p = payload(response, KmipEnum.OP_GET);
        int type = p.get(Tag.OBJECT_TYPE).intValue();
        if (type != KmipEnum.OBJECT_SYMMETRIC_KEY) {
            throw new KmipException("the object is not a symmetric key (object type " + type + ")");
        }
        Ttlv block = p.get(Tag.SYMMETRIC_KEY).get(Tag.KEY_BLOCK);
        int format = block.get(Tag.KEY_FORMAT_TYPE).intValue();
        if (format != KmipEnum.KEY_FORMAT_RAW) {
            throw new KmipException("the key is in format " + format + ", not Raw");
        }
        Ttlv alg = block.find(Tag.CRYPTOGRAPHIC_ALGORITHM);
        Ttlv len = block.find(Tag.CRYPTOGRAPHIC_LENGTH);
        byte[] material = block.get(Tag.KEY_VALUE).get(Tag.KEY_MATERIAL).bytesValue();
        return new KeyBlock(alg == null ? -1 : alg.intValue(), len == null ? -1 : len.intValue(), material);
    }

    /** GetAttributes' answer as name → values (an attribute may have several instances, e.g. Name). */
    public static Map<String, List<Ttlv>> attributes(Ttlv response) {
        Map<String, List<Ttlv>> out = new HashMap<>();
        for (Ttlv a : payload(response, KmipEnum.OP_GET_ATTRIBUTES).all(Tag.ATTRIBUTE)) {
            out.computeIfAbsent(a.get(Tag.ATTRIBUTE_NAME).textValue(), k -> new ArrayList<>())
                    .add(a.get(Tag.ATTRIBUTE_VALUE));
        }
        return out;
    }
}
