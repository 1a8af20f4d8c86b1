package dev.fleproxy.crypto;

/**
 * The tags of one field's range index (docs/envelope-format.md, "Range index tags"), under its
 * {@link TagKey} of kind "range": over
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
 * share a tree node.
 */
public final class RangeTags {
    public static final int TAG_BYTES = TagKey.TAG_BYTES;

    private final TagKey key;
    private final byte[] other;
    private final byte[] none;

    private RangeTags(TagKey key) {
        this.key = key;
        this.other = key.tagOfByte((byte) 0x02);
        this.none = key.tagOfByte((byte) 0x03);
    }

    /** The range tags of one field of one collection, under the collection's key. */
    public static RangeTags of(DataKey collectionKey, String namespace, String field) {
        return new RangeTags(TagKey.of(collectionKey, "range", namespace, field));
    }

    /** As {@link #of}, derived afresh (for the vectors' test). */
    static RangeTags derive(DataKey collectionKey, String namespace, String field) {
        return new RangeTags(TagKey.derive(collectionKey, "range", namespace, field));
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
        return key.tag(in);
    }

    public byte[] other() {
        return other.clone();
    }

    public byte[] none() {
        return none.clone();
    }
}
