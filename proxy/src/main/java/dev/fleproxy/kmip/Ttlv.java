package dev.fleproxy.kmip;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One TTLV item: a 3-byte tag, a type byte, a 4-byte big-endian length, and a value padded to a
 * multiple of 8 bytes (structures hold items). Immutable; {@link #encode()} and
 * {@link #decode(byte[])} are exact inverses for every item type.
 */
public final class Ttlv {
    private final int tag;
    private final TtlvType type;
    private final Object value;

    private Ttlv(int tag, TtlvType type, Object value) {
        if ((tag & 0xff000000) != 0) {
            throw new IllegalArgumentException("a TTLV tag has three bytes: 0x" + Integer.toHexString(tag));
        }
        this.tag = tag;
        this.type = type;
        this.value = value;
    }

    public static Ttlv structure(int tag, List<Ttlv> items) {
        return new Ttlv(tag, TtlvType.STRUCTURE, List.copyOf(items));
    }

    public static Ttlv structure(int tag, Ttlv... items) {
        return structure(tag, List.of(items));
    }

    public static Ttlv integer(int tag, int v) {
        return new Ttlv(tag, TtlvType.INTEGER, v);
    }

    public static Ttlv longInteger(int tag, long v) {
        return new Ttlv(tag, TtlvType.LONG_INTEGER, v);
    }

    public static Ttlv bigInteger(int tag, BigInteger v) {
        return new Ttlv(tag, TtlvType.BIG_INTEGER, v);
    }

    public static Ttlv enumeration(int tag, int v) {
        return new Ttlv(tag, TtlvType.ENUMERATION, v);
    }

    public static Ttlv bool(int tag, boolean v) {
        return new Ttlv(tag, TtlvType.BOOLEAN, v);
    }

    public static Ttlv text(int tag, String v) {
        return new Ttlv(tag, TtlvType.TEXT_STRING, v);
    }

    public static Ttlv bytes(int tag, byte[] v) {
        return new Ttlv(tag, TtlvType.BYTE_STRING, v.clone());
    }

    /** Seconds since the epoch. */
    public static Ttlv dateTime(int tag, long seconds) {
        return new Ttlv(tag, TtlvType.DATE_TIME, seconds);
    }

    public static Ttlv interval(int tag, int seconds) {
        return new Ttlv(tag, TtlvType.INTERVAL, seconds);
    }

    public int tag() {
        return tag;
    }

    public TtlvType type() {
        return type;
    }

    // ---- reading -------------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    public List<Ttlv> items() {
        expect(TtlvType.STRUCTURE);
        return (List<Ttlv>) value;
    }

    /** The first item with this tag, or null. */
    public Ttlv find(int childTag) {
        for (Ttlv t : items()) {
            if (t.tag == childTag) {
                return t;
            }
        }
        return null;
    }

    /** The first item with this tag; a missing one is a protocol error naming the tag. */
    public Ttlv get(int childTag) {
        Ttlv t = find(childTag);
        if (t == null) {
            throw new KmipException("KMIP response lacks " + Tag.name(childTag) + " in " + Tag.name(tag));
        }
        return t;
    }

    public List<Ttlv> all(int childTag) {
        List<Ttlv> out = new ArrayList<>();
        for (Ttlv t : items()) {
            if (t.tag == childTag) {
                out.add(t);
            }
        }
        return out;
    }

    /** Integer, Enumeration or Interval value. */
    public int intValue() {
        if (type != TtlvType.INTEGER && type != TtlvType.ENUMERATION && type != TtlvType.INTERVAL) {
            throw new KmipException(Tag.name(tag) + " is " + type + ", not a 32-bit value");
        }
        return (Integer) value;
    }

    /** Long Integer or Date-Time value. */
    public long longValue() {
        if (type != TtlvType.LONG_INTEGER && type != TtlvType.DATE_TIME) {
            throw new KmipException(Tag.name(tag) + " is " + type + ", not a 64-bit value");
        }
        return (Long) value;
    }

    public BigInteger bigIntegerValue() {
        expect(TtlvType.BIG_INTEGER);
        return (BigInteger) value;
    }

    public boolean booleanValue() {
        expect(TtlvType.BOOLEAN);
        return (Boolean) value;
    }

    public String textValue() {
        expect(TtlvType.TEXT_STRING);
        return (String) value;
    }

    public byte[] bytesValue() {
        expect(TtlvType.BYTE_STRING);
        return ((byte[]) value).clone();
    }

    private void expect(TtlvType t) {
        if (type != t) {
            throw new KmipException(Tag.name(tag) + " is " + type + ", not " + t);
        }
    }

    // ---- encoding ------------------------------------------------------------------------------

    public byte[] encode() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        encodeTo(out);
        return out.toByteArray();
    }

    private void encodeTo(ByteArrayOutputStream out) {
        byte[] body = switch (type) {
            case STRUCTURE -> {
                ByteArrayOutputStream inner = new ByteArrayOutputStream();
                for (Ttlv t : items()) {
                    t.encodeTo(inner);
                }
                yield inner.toByteArray();
            }
            case INTEGER, ENUMERATION, INTERVAL -> ByteBuffer.allocate(4).putInt((Integer) value).array();
            case LONG_INTEGER, DATE_TIME -> ByteBuffer.allocate(8).putLong((Long) value).array();
            case BOOLEAN -> ByteBuffer.allocate(8).putLong((Boolean) value ? 1 : 0).array();
            case TEXT_STRING -> ((String) value).getBytes(StandardCharsets.UTF_8);
            case BYTE_STRING -> (byte[]) value;
            case BIG_INTEGER -> bigIntegerBytes((BigInteger) value);
        };
        out.write(tag >>> 16);
        out.write(tag >>> 8);
        out.write(tag);
        out.write(type.code());
        out.writeBytes(ByteBuffer.allocate(4).putInt(body.length).array());
        out.writeBytes(body);
        out.writeBytes(new byte[padding(body.length)]);
    }

    /** Two's complement, sign-extended to a multiple of 8 bytes (the length is that multiple). */
    private static byte[] bigIntegerBytes(BigInteger v) {
        byte[] b = v.toByteArray();
        int len = (b.length + 7) / 8 * 8;
        byte[] out = new byte[len];
        Arrays.fill(out, 0, len - b.length, v.signum() < 0 ? (byte) 0xff : 0);
        System.arraycopy(b, 0, out, len - b.length, b.length);
        return out;
    }

    static int padding(int length) {
        return (8 - length % 8) % 8;
    }

    // ---- decoding ------------------------------------------------------------------------------

    /**
     * Structures nest this deep at most. Real messages nest under ten levels; a message of 1 MiB
     * could nest 131072 deep, and the recursive decoder would overflow the stack.
     */
    static final int MAX_DEPTH = 64;

    /** Decodes exactly one item filling the whole array. */
    public static Ttlv decode(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        Ttlv t = decode(in, 0);
        if (in.hasRemaining()) {
            throw new KmipException("TTLV has " + in.remaining() + " bytes after its item");
        }
        return t;
    }

    private static Ttlv decode(ByteBuffer in, int depth) {
        if (in.remaining() < 8) {
            throw new KmipException("TTLV truncated: " + in.remaining() + " bytes where a header needs 8");
        }
        int tag = ((in.get() & 0xff) << 16) | ((in.get() & 0xff) << 8) | (in.get() & 0xff);
        TtlvType type = TtlvType.of(in.get() & 0xff);
        // Unsigned and in long: a length near 2^31 plus its padding would wrap around in int and
        // pass the check, and the slice below would then throw something else than KmipException.
        long declared = in.getInt() & 0xffffffffL;
        long padded = (declared + 7) & ~7L;
        if (padded > in.remaining()) {
            throw new KmipException("TTLV item " + Tag.name(tag) + " declares " + declared + " bytes but "
                    + in.remaining() + " remain");
        }
        int length = (int) declared;
        ByteBuffer body = in.slice(in.position(), length);
        in.position(in.position() + (int) padded);
        return value(tag, type, body, length, depth);
    }

    /** The item's value from its body, checked against what its type allows. */
    private static Ttlv value(int tag, TtlvType type, ByteBuffer body, int length, int depth) {
        return switch (type) {
            case STRUCTURE -> {
                if (depth == MAX_DEPTH) {
                    throw new KmipException("TTLV structures nested more than " + MAX_DEPTH + " deep");
                }
                List<Ttlv> items = new ArrayList<>();
                while (body.hasRemaining()) {
                    items.add(decode(body, depth + 1));
                }
                yield new Ttlv(tag, type, List.copyOf(items));
            }
            case INTEGER, ENUMERATION, INTERVAL -> {
                fixed(tag, length, 4);
                yield new Ttlv(tag, type, body.getInt());
            }
            case LONG_INTEGER, DATE_TIME -> {
                fixed(tag, length, 8);
                yield new Ttlv(tag, type, body.getLong());
            }
            case BOOLEAN -> {
                fixed(tag, length, 8);
                yield new Ttlv(tag, type, body.getLong() != 0);
            }
            case TEXT_STRING -> {
                byte[] b = new byte[length];
                body.get(b);
                yield new Ttlv(tag, type, new String(b, StandardCharsets.UTF_8));
            }
            case BYTE_STRING -> {
                byte[] b = new byte[length];
                body.get(b);
                yield new Ttlv(tag, type, b);
            }
            case BIG_INTEGER -> {
                if (length == 0) {
                    // new BigInteger(byte[0]) would throw NumberFormatException
                    throw new KmipException("TTLV item " + Tag.name(tag) + " is a Big Integer of length 0");
                }
                byte[] b = new byte[length];
                body.get(b);
                yield new Ttlv(tag, type, new BigInteger(b));
            }
        };
    }

    private static void fixed(int tag, int actual, int expected) {
        if (actual != expected) {
            throw new KmipException("TTLV item " + Tag.name(tag) + " has length " + actual + ", expected " + expected);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Ttlv t && Arrays.equals(encode(), t.encode());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(encode());
    }

    /** Tag and type only for byte strings: their contents may be key material. */
    @Override
    public String toString() {
        return switch (type) {
            case STRUCTURE -> Tag.name(tag) + items();
            case BYTE_STRING -> Tag.name(tag) + "(" + ((byte[]) value).length + " bytes)";
            default -> Tag.name(tag) + "=" + value;
        };
    }
}
