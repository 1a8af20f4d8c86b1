package dev.fleproxy.crypto;

import java.nio.charset.StandardCharsets;

/**
 * The tags of one field's prefix index (docs/envelope-format.md, "Prefix index tags"), under its
 * {@link TagKey} of kind "prefix": over 0x04 and the UTF-8 of a (folded) prefix; 0x02 "other" (an
 * array, whose elements a regex may match); 0x03 "none" (not a string, or one shorter than the
 * index's shortest prefix).
 */
public final class PrefixTags {
    private final TagKey key;
    private final byte[] other;
    private final byte[] none;

    private PrefixTags(TagKey key) {
        this.key = key;
        this.other = key.tag(new byte[] {0x02});
        this.none = key.tag(new byte[] {0x03});
    }

    public static PrefixTags of(DataKey collectionKey, String namespace, String field) {
        return new PrefixTags(TagKey.of(collectionKey, "prefix", namespace, field));
    }

    static PrefixTags derive(DataKey collectionKey, String namespace, String field) {
        return new PrefixTags(TagKey.derive(collectionKey, "prefix", namespace, field));
    }

    /** The tag of a prefix, as folded by the index. */
    public byte[] prefix(String folded) {
        byte[] s = folded.getBytes(StandardCharsets.UTF_8);
        byte[] in = new byte[1 + s.length];
        in[0] = 0x04;
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
