package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ConfigSchema;
import dev.fleproxy.config.PolicySection;
import dev.fleproxy.crypto.CipherSuite;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The {@code collections:} section, checked for form (the KMS checks come later, in
 * {@code keys.PolicyValidator}):
 *
 * <pre>
 * envelopeSubtype: 6              # BSON binary subtype of envelopes: 6 (default), 0 for the embedded backend
 * collections:
 *   ycsb.usertable_aes: { key: 89d6d529-…, fields: "*" }          # every top-level field but _id
 *   hr.people:
 *     key: da6fd698-4681-3bb5-88ad-d1d9d68b1df6
 *     previousKeys: [93a7f87f-…]  # optional; keys it was encrypted under before: they open, never seal
 *     suite: ARIA_CBC_HMAC        # optional; default GCM (CBC-HMAC for 3DES and SEED)
 *     plaintextReads: deny        # optional; allow returns non-envelope values as stored (migration only)
 *     envelopeSubtype: 0          # optional, overrides the global one
 *     fields:
 *       ssn: { deterministic: true }   # equality queries allowed
 *       address.street: {}             # nested path
 *       phones: {}                     # a whole array as one value
 * </pre>
 *
 * {@code fields} may also be a list of paths (strings, or one-key maps as above).
 */
public final class PolicyParser {
    private static final Set<String> COLLECTION_KEYS = ConfigSchema.keysOf("collections.*");
    private static final Set<String> FIELD_KEYS = ConfigSchema.keysOf("collections.*.fields.*");

    private PolicyParser() {
    }

    /** The policy a config file's {@code collections:} and {@code envelopeSubtype:} describe. */
    public static Policy parse(PolicySection section) {
        Identities identities = IdentitiesParser.parse(section.identities(), section.source());
        Policy p = parse(section.collections(), section.envelopeSubtype(), section.source());
        FieldAccessParser.checkNames(p, identities, section.source());
        return p.withIdentities(identities);
    }

    public static Policy parse(Object collections, Object globalSubtype, String source) {
        // checked before anything else: a file with no collections yet must not carry a bad value
        // that the first collection added by a reload would then be stored under
        byte defaultSubtype = subtype(globalSubtype, source + ": envelopeSubtype", (byte) 6);
        if (collections == null) {
            return Policy.EMPTY;
        }
        if (!(collections instanceof Map<?, ?> map)) {
            throw new ConfigException(source + ": collections must map \"db.collection\" to a policy");
        }
        Map<String, CollectionPolicy> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String ns = String.valueOf(e.getKey());
            String where = source + ": collections." + ns.replace("\0", "\\0");
            NamespaceNames.check(ns, where);
            out.put(ns, collection(ns, e.getValue(), where, defaultSubtype));
        }
        return new Policy(out);
    }

    private static CollectionPolicy collection(String ns, Object node, String where, byte defaultSubtype) {
        if (!(node instanceof Map<?, ?> m)) {
            throw new ConfigException(where + " must be a mapping with key: and fields:");
        }
        Set<String> unknown = new TreeSet<>();
        m.keySet().forEach(k -> {
            if (!COLLECTION_KEYS.contains(String.valueOf(k))) {
                unknown.add(String.valueOf(k));
            }
        });
        if (!unknown.isEmpty()) {
            throw new ConfigException(where + ": unknown key(s) " + unknown + "; known keys are " + new TreeSet<>(COLLECTION_KEYS));
        }
        Object key = m.get("key");
        UUID keyId;
        try {
            keyId = UUID.fromString(String.valueOf(key));
        } catch (IllegalArgumentException ex) {
            throw new ConfigException(where + ".key must be a key UUID, not " + key);
        }
        List<UUID> previousKeys = previousKeys(m.get("previousKeys"), keyId, where);
        boolean plaintextReads = plaintextReads(m.get("plaintextReads"), where);
        CipherSuite suite = null;
        if (m.get("suite") != null) {
            try {
                suite = CipherSuite.valueOf(String.valueOf(m.get("suite")));
            } catch (IllegalArgumentException ex) {
                throw new ConfigException(where + ".suite " + m.get("suite") + " is not one of "
                        + List.of(CipherSuite.values()));
            }
        }
        byte subtype = subtype(m.get("envelopeSubtype"), where + ".envelopeSubtype", defaultSubtype);
        int maxScan = maxScanDocuments(m.get("maxScanDocuments"), where + ".maxScanDocuments");
        Object fields = m.get("fields");
        if ("*".equals(fields)) {
            return new CollectionPolicy(ns, keyId, previousKeys, suite, true, Map.of(), subtype, plaintextReads, maxScan);
        }
        Map<String, FieldRule> rules = new LinkedHashMap<>();
        if (fields instanceof Map<?, ?> fm) {
            fm.forEach((path, opts) -> add(rules, String.valueOf(path), opts, where));
        } else if (fields instanceof List<?> list) {
            for (Object item : list) {
                if (item instanceof Map<?, ?> im && im.size() == 1) {
                    Map.Entry<?, ?> only = im.entrySet().iterator().next();
                    add(rules, String.valueOf(only.getKey()), only.getValue(), where);
                } else {
                    add(rules, String.valueOf(item), null, where);
                }
            }
        } else {
            throw new ConfigException(where + ".fields must be \"*\", a mapping of paths, or a list of paths");
        }
        if (rules.isEmpty()) {
            throw new ConfigException(where + ".fields lists no field");
        }
        checkNoOverlap(rules, where);
        return new CollectionPolicy(ns, keyId, previousKeys, suite, false, rules, subtype, plaintextReads, maxScan);
    }

    private static int maxScanDocuments(Object node, String where) {
        ConfigSchema.Setting s = ConfigSchema.COLLECTION_MAX_SCAN_DOCUMENTS;
        if (node == null) {
            return s.intDefault();
        }
        if (!(node instanceof Integer n) || n < s.min() || n > s.max()) {
            throw new ConfigException(where + " must be an integer " + s.min() + "-" + s.max() + ", not " + node);
        }
        return n;
    }

    /** Keys the collection was encrypted under before: distinct, and none of them its current key. */
    private static List<UUID> previousKeys(Object node, UUID keyId, String where) {
        if (node == null) {
            return List.of();
        }
        if (!(node instanceof List<?> list)) {
            throw new ConfigException(where + ".previousKeys must be a list of key UUIDs");
        }
        List<UUID> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            UUID id;
            try {
                id = UUID.fromString(String.valueOf(list.get(i)));
            } catch (IllegalArgumentException ex) {
                throw new ConfigException(where + ".previousKeys[" + i + "] must be a key UUID, not " + list.get(i));
            }
            if (id.equals(keyId)) {
                throw new ConfigException(where + ".previousKeys lists " + id + ", which is the collection's key: "
                        + "previous keys are the ones it was encrypted under before");
            }
            if (out.contains(id)) {
                throw new ConfigException(where + ".previousKeys lists " + id + " twice");
            }
            out.add(id);
        }
        return out;
    }

    /**
     * Only the two words: a YAML true/false (or yes/no, which YAML 1.1 also reads as booleans)
     * would leave it unclear which way was meant.
     */
    private static boolean plaintextReads(Object node, String where) {
        if (node == null || "deny".equals(node)) {
            return false;
        }
        if ("allow".equals(node)) {
            return true;
        }
        throw new ConfigException(where + ".plaintextReads must be allow or deny (default deny), not " + node);
    }

    private static void add(Map<String, FieldRule> rules, String path, Object opts, String where) {
        if (path.isEmpty() || path.startsWith(".") || path.endsWith(".") || path.contains("..") || path.contains("$")) {
            throw new ConfigException(where + ".fields: '" + path + "' is not a dotted field path");
        }
        if (path.equals("_id") || path.startsWith("_id.")) {
            throw new ConfigException(where + ".fields: _id is never encrypted (the database needs it to find documents)");
        }
        for (String segment : path.split("\\.")) {
            // Commands address array elements as "items.0", so the rewriter reads an all-digit
            // segment as an index; a field named "2024" could then never be matched exactly and
            // its values would be written in plaintext. Refuse rather than guess.
            if (segment.chars().allMatch(Character::isDigit)) {
                throw new ConfigException(where + ".fields: '" + path + "' has an all-digit segment '" + segment
                        + "', which MongoDB paths also use as an array index, so the proxy could not tell them apart;"
                        + " rename the field or encrypt its parent as a whole");
            }
        }
        if (path.equals(RangeIndex.TAG_FIELD) || path.startsWith(RangeIndex.TAG_FIELD + ".")) {
            throw new ConfigException(where + ".fields: '" + path + "' is the proxy's own field (its search tags)");
        }
        boolean det = false;
        FieldAccess access = FieldAccess.OPEN;
        RangeIndex range = null;
        List<TextIndex> text = List.of();
        if (opts instanceof Map<?, ?> om) {
            for (Object k : om.keySet()) {
                if (!FIELD_KEYS.contains(String.valueOf(k))) {
                    throw new ConfigException(where + ".fields." + path + ": unknown option " + k + "; known options "
                            + "are " + FIELD_KEYS);
                }
            }
            Object d = om.get("deterministic");
            if (d != null && !(d instanceof Boolean)) {
                throw new ConfigException(where + ".fields." + path + ".deterministic must be true or false");
            }
            det = Boolean.TRUE.equals(d);
            access = FieldAccessParser.parse(om, where + ".fields." + path, det);
            range = SearchIndexParser.range(om.get("index"), path, where + ".fields." + path + ".index");
            text = SearchIndexParser.text(om.get("index"), where + ".fields." + path + ".index");
        } else if (opts != null) {
            throw new ConfigException(where + ".fields." + path + " must be {} or a mapping of its options "
                    + "(deterministic, reveal, mask, keep, query, write, index)");
        }
        rules.put(path, new FieldRule(path, det, access, range, text));
    }

    /**
     * "a" and "a.b" cannot both be encrypted: a.b would be inside a's envelope. Each path's own
     * prefixes are looked up, so a list of thousands of paths is checked in linear time (issue 30).
     */
    private static void checkNoOverlap(Map<String, FieldRule> rules, String where) {
        for (String b : rules.keySet()) {
            for (int dot = b.indexOf('.'); dot >= 0; dot = b.indexOf('.', dot + 1)) {
                String a = b.substring(0, dot);
                if (rules.containsKey(a)) {
                    throw new ConfigException(where + ".fields: " + b + " lies inside " + a
                            + ", which is encrypted as a whole; list only one of them");
                }
            }
        }
    }

    private static byte subtype(Object v, String where, byte dflt) {
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Integer i) || (i != 0 && i != 6)) {
            throw new ConfigException(where + " must be 6 (encrypted value) or 0 (generic, for the embedded backend)");
        }
        return (byte) (int) i;
    }
}
