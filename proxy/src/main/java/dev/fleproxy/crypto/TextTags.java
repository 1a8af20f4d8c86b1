package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;

/**
 * The tags of one field's text index of one kind (docs/envelope-format.md, "Text index tags"),
 * under its {@link TagKey} of that kind ("prefix", "suffix", "substring"): over the kind's byte
 * (0x04, 0x05, 0x06) and the UTF-8 of a folded prefix, suffix or n-gram; 0x02 "other" (an array,
 * whose elements a regex may match, or a string longer than a substring index reads); 0x03
 * "none" (not a string, or one no query's literal can be found in).
 */
public final class TextTags {
    /** The kinds, each with the configuration key that names it and the byte its tags begin with. */
    public enum Kind {
        PREFIX("prefix", (byte) 0x04), SUFFIX("suffix", (byte) 0x05), SUBSTRING("substring", (byte) 0x06);

        private final String key;
        private final byte tagByte;

        Kind(String key, byte tagByte) {
            this.key = key;
            this.tagByte = tagByte;
        }

        /** Its name in the configuration ({@code index: {prefix: …}}) and in its tag key's derivation. */
        public String key() {
            return key;
        }

        /** The first byte of what its tags are made from (docs/envelope-format.md). */
        public byte tagByte() {
            return tagByte;
        }
    }

    private final TagKey key;
    private final byte kindByte;
    private final byte[] other;
    private final byte[] none;

    private TextTags(TagKey key, Kind kind) {
        this.key = key;
        this.kindByte = kind.tagByte();
        this.other = key.tagOfByte((byte) 0x02);
        this.none = key.tagOfByte((byte) 0x03);
    }

    public static TextTags of(DataKey collectionKey, String namespace, String field, Kind kind) {
        return new TextTags(TagKey.of(collectionKey, kind.key(), namespace, field), kind);
    }

    static TextTags derive(DataKey collectionKey, String namespace, String field, Kind kind) {
        return new TextTags(TagKey.derive(collectionKey, kind.key(), namespace, field), kind);
    }

    /** The tag of a prefix, suffix or n-gram, as folded by the index. */
    public byte[] text(String folded) {
        byte[] s = folded.getBytes(StandardCharsets.UTF_8);
        byte[] in = new byte[1 + s.length];
        in[0] = kindByte;
        System.arraycopy(s, 0, in, 1, s.length);
        return key.tag(in);
    }

    public byte[] other() {
        return other.clone();
    }

    public byte[] none() {
        return none.clone();
    }
}
