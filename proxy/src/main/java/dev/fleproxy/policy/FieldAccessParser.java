package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ConfigSchema;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** A field's {@code reveal}, {@code mask}, {@code keep}, {@code query} and {@code write} options. */
final class FieldAccessParser {
    private FieldAccessParser() {
    }

    /**
     * @param deterministic a deterministic field's {@code write} defaults to who may {@code query}
     *     it: whether a write of its value changes a stored document (nModified, a duplicate key)
     *     tells the writer whether the value was stored already, an equality search by other means
     */
    static FieldAccess parse(Map<?, ?> options, String where, boolean deterministic) {
        Set<String> reveal = names(options.get("reveal"), where + ".reveal");
        Set<String> query = names(options.get("query"), where + ".query");
        Set<String> write = names(options.get("write"), where + ".write");
        Set<String> deny = names(options.get("deny"), where + ".deny");
        if (deny != null && reveal == null) {
            throw new ConfigException(where + ".deny is given without reveal: everyone sees the plaintext");
        }
        if (deny != null && reveal != null) {
            for (String d : deny) {
                if (reveal.contains(d)) {
                    throw new ConfigException(where + ": identity '" + d + "' is in both reveal and deny");
                }
            }
        }
        Object maskNode = options.get("mask");
        FieldAccess.Mask mask = FieldAccess.Mask.DENY;
        if (maskNode != null) {
            try {
                mask = FieldAccess.Mask.valueOf(String.valueOf(maskNode).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where + ".mask must be redact, partial, pseudonym or deny, not " + maskNode);
            }
            if (reveal == null) {
                throw new ConfigException(where + ".mask is given without reveal: everyone sees the plaintext, so no "
                        + "one would get the mask; name who may see it in reveal");
            }
        }
        ConfigSchema.Setting k = ConfigSchema.FIELD_KEEP;
        Object keepNode = options.get("keep");
        int keep = k.intDefault();
        if (keepNode != null) {
            if (!(keepNode instanceof Integer n) || n < k.min() || n > k.max() || mask != FieldAccess.Mask.PARTIAL) {
                throw new ConfigException(where + ".keep is an integer " + k.min() + "-" + k.max()
                        + ", with mask: partial only");
            }
            keep = n;
        }
        if (reveal == null && query == null && write == null) {
            return FieldAccess.OPEN;
        }
        Set<String> queried = query != null ? query : reveal;
        return new FieldAccess(reveal, mask, keep, deny, queried, write == null && deterministic ? queried : write);
    }

    private static Set<String> names(Object node, String where) {
        if (node == null) {
            return null;
        }
        if (!(node instanceof List<?> list)) {
            throw new ConfigException(where + " must be a list of identity names (anonymous included)");
        }
        Set<String> out = new LinkedHashSet<>();
        for (Object o : list) {
            out.add(String.valueOf(o));
        }
        return out;
    }

    /** Every identity a field rule names is one the identities: section defines, or anonymous. */
    static void checkNames(Policy p, Identities identities, String source) {
        for (CollectionPolicy c : p.collections().values()) {
            for (FieldRule r : c.fields().values()) {
                FieldAccess a = r.access();
                for (Set<String> names : new Set[] {a.reveal(), a.deny(), a.query(), a.write()}) {
                    if (names == null) {
                        continue;
                    }
                    for (String n : names) {
                        if (!identities.knows(n)) {
                            throw new ConfigException(source + ": collections." + c.namespace() + ".fields." + r.path()
                                    + " names identity '" + n + "', which identities: does not define (known: "
                                    + identities.names() + ")");
                        }
                    }
                }
            }
        }
    }
}
