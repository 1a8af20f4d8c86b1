package dev.fleproxy.wire;

import java.nio.charset.StandardCharsets;
import org.bson.BSONException;

/**
 * Walks the elements of one BSON document in place, in a byte array, without decoding them.
 * Every length is checked against its container, so a lying length is a {@link BSONException}
 * (malformed input), never a read outside the document. One cursor, no allocation per element:
 * after {@link #next} the public fields describe the current element.
 */
public final class BsonCursor {
    public static final byte DOUBLE = 0x01;
    public static final byte STRING = 0x02;
    public static final byte DOCUMENT = 0x03;
    public static final byte ARRAY = 0x04;
    public static final byte BINARY = 0x05;
    public static final byte NULL = 0x0A;
    public static final byte INT32 = 0x10;

    private final byte[] buf;
    private final int end;
    private int pos;

    /** The current element's type byte. */
    public byte type;
    /** Where the current element starts (its type byte). */
    public int elementStart;
    /** Its name: [nameStart, nameEnd), nameEnd is the index of the name's NUL. */
    public int nameStart;
    public int nameEnd;
    /** Its value bytes: [valueStart, valueEnd). */
    public int valueStart;
    public int valueEnd;

    /** A cursor over the document at buf[offset, offset + its int32 length), which must fit in limit. */
    public BsonCursor(byte[] buf, int offset, int limit) {
        int len = documentLength(buf, offset, limit);
        this.buf = buf;
        this.pos = offset + 4;
        this.end = offset + len - 1; // the terminating NUL
    }

    public byte[] buffer() {
        return buf;
    }

    /** Checks a document's length frame and terminator; returns its length. */
    public static int documentLength(byte[] buf, int offset, int limit) {
        if (offset < 0 || limit - offset < 5 || limit > buf.length) {
            throw new BSONException("a document is truncated");
        }
        int len = int32(buf, offset);
        if (len < 5 || len > limit - offset) {
            throw new BSONException("a document declares " + len + " bytes but " + (limit - offset) + " remain");
        }
        if (buf[offset + len - 1] != 0) {
            throw new BSONException("a document is not terminated by a NUL byte");
        }
        return len;
    }

    /** Moves to the next element; false at the end of the document. */
    public boolean next() {
        if (pos >= end) {
            return false;
        }
        elementStart = pos;
        type = buf[pos];
        nameStart = pos + 1;
        nameEnd = indexOfNul(buf, nameStart, end);
        valueStart = nameEnd + 1;
        valueEnd = valueStart + valueLength(type, buf, valueStart, end);
        if (valueEnd > end || valueEnd < valueStart) {
            throw new BSONException("an element's value runs past the end of its document");
        }
        pos = valueEnd;
        return true;
    }

    /** The current element's name (allocates; for messages and rare paths). */
    public String name() {
        return new String(buf, nameStart, nameEnd - nameStart, StandardCharsets.UTF_8);
    }

    /** True if the current element's name is exactly these bytes (ASCII or UTF-8). */
    public boolean nameIs(byte[] name) {
        int n = nameEnd - nameStart;
        if (n != name.length) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (buf[nameStart + i] != name[i]) {
                return false;
            }
        }
        return true;
    }

    /** The current element's value as a String if it is one, else null. */
    public String stringValue() {
        if (type != STRING) {
            return null;
        }
        return new String(buf, valueStart + 4, valueEnd - valueStart - 5, StandardCharsets.UTF_8);
    }

    /** The current element's value as a number (double, int32, int64), or NaN if it is none. */
    public double numberValue() {
        return switch (type) {
            case DOUBLE -> Double.longBitsToDouble(int64(buf, valueStart));
            case INT32 -> int32(buf, valueStart);
            case 0x12 -> int64(buf, valueStart);
            default -> Double.NaN;
        };
    }

    /** The current element's value if it is an int64 or int32 (exactly: a cursor id is one), else null. */
    public Long longValue() {
        return switch (type) {
            case INT32 -> (long) int32(buf, valueStart);
            case 0x12 -> int64(buf, valueStart);
            default -> null;
        };
    }

    /** Moves to the element with this name; false (at the end) if there is none. */
    public boolean find(byte[] name) {
        while (next()) {
            if (nameIs(name)) {
                return true;
            }
        }
        return false;
    }

    private static int indexOfNul(byte[] buf, int from, int limit) {
        for (int i = from; i < limit; i++) {
            if (buf[i] == 0) {
                return i;
            }
        }
        throw new BSONException("an element name is not terminated");
    }

    /** The length of a value of type t starting at buf[p], which must end by {@code end}. */
    static int valueLength(byte t, byte[] buf, int p, int end) {
        switch (t) {
            case DOUBLE, 0x09, 0x11, 0x12: // double, UTC datetime, timestamp, int64
                return 8;
            case STRING, 0x0D, 0x0E: // string, JavaScript, symbol
                return stringLength(buf, p, end);
            case DOCUMENT, ARRAY:
                return documentLength(buf, p, end);
            case BINARY: {
                int n = int32Within(buf, p, end);
                if (n < 0) {
                    throw new BSONException("a binary value declares a negative length");
                }
                return 5 + n;
            }
            case 0x06, 0x0A, (byte) 0xFF, 0x7F: // undefined, null, min key, max key
                return 0;
            case 0x07: // ObjectId
                return 12;
            case 0x08: // boolean
                return 1;
            case 0x0B: { // regular expression: two cstrings
                int first = indexOfNul(buf, p, end);
                return indexOfNul(buf, first + 1, end) + 1 - p;
            }
            case 0x0C: // DBPointer: string + ObjectId
                return stringLength(buf, p, end) + 12;
            case 0x0F: { // code with scope: int32 total, string, document
                int n = int32Within(buf, p, end);
                if (n < 14) {
                    throw new BSONException("a code-with-scope value is too short");
                }
                return n;
            }
            case INT32:
                return 4;
            case 0x13: // decimal128
                return 16;
            default:
                throw new BSONException("unknown BSON type 0x" + Integer.toHexString(t & 0xff));
        }
    }

    private static int stringLength(byte[] buf, int p, int end) {
        int n = int32Within(buf, p, end);
        if (n < 1 || n > end - p - 4) {
            throw new BSONException("a string declares " + n + " bytes");
        }
        if (buf[p + 4 + n - 1] != 0) {
            throw new BSONException("a string is not terminated by a NUL byte");
        }
        return 4 + n;
    }

    private static int int32Within(byte[] buf, int p, int end) {
        if (end - p < 4) {
            throw new BSONException("a length runs past the end of its document");
        }
        return int32(buf, p);
    }

    public static int int32(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }

    public static long int64(byte[] b, int p) {
        return (int32(b, p) & 0xffffffffL) | ((long) int32(b, p + 4) << 32);
    }

    /** A field name the proxy will not decide by: given twice in one document, or not valid UTF-8. */
    public record NameProblem(String path, boolean duplicate) {
        /** How a refusal says it (the path is the client's own, dotted; never a value). */
        public String describe() {
            return duplicate ? "the field '" + path + "' is given twice in one document"
                    : "a field name that is not valid UTF-8" + (path.isEmpty() ? "" : " (under '" + path + "')");
        }
    }

    /**
     * The first field name given twice in one document of buf[off, its end), or not valid UTF-8,
     * at any depth ({@code deep}) or among the top-level names only; null if there is none.
     * (Decoders keep one of two values of a name, servers may use the other; a name that is not
     * UTF-8 is read by Java as another name than the server sees: on an encrypted collection a
     * command with either is not forwarded.)
     */
    public static NameProblem nameProblem(byte[] buf, int off, int limit, boolean deep) {
        return nameProblem(buf, off, limit, false, 0, deep);
    }

    /** The problem's path relative to this document (built only when one is found). */
    private static NameProblem nameProblem(byte[] buf, int off, int limit, boolean array, int depth, boolean deep) {
        if (depth > 1000) {
            throw new BSONException("documents nested too deeply to decode");
        }
        BsonCursor c = new BsonCursor(buf, off, limit);
        // [start, end) of each name so far, compared pair by pair: no String made for a document of up
        // to 32 names (a profile of ten-field inserts found the set and its Strings 1.5 % of the proxy's
        // CPU); room for 4 names at first, grown as needed (most sub-documents hold one or two)
        int[] names = array ? null : new int[8];
        int n = 0;
        java.util.Set<String> many = null; // past 32 names, a set instead of comparing each pair
        while (c.next()) {
            if (!array) {
                if (!Utf8.isValid(buf, c.nameStart, c.nameEnd)) {
                    return new NameProblem("", false);
                }
                if (many == null) {
                    for (int i = 0; i < n; i += 2) {
                        // length and last byte first: names of one length mostly differ at their end
                        // (field0, field1), and that is two loads, not a call
                        if (names[i + 1] - names[i] == c.nameEnd - c.nameStart
                                && (c.nameEnd == c.nameStart || buf[names[i + 1] - 1] == buf[c.nameEnd - 1])
                                && java.util.Arrays.equals(buf, names[i], names[i + 1], buf, c.nameStart, c.nameEnd)) {
                            return new NameProblem(c.name(), true);
                        }
                    }
                    if (n == names.length && n < 64) {
                        names = java.util.Arrays.copyOf(names, 2 * n);
                    }
                    if (n == names.length) {
                        many = new java.util.HashSet<>();
                        for (int i = 0; i < n; i += 2) {
                            many.add(new String(buf, names[i], names[i + 1] - names[i], StandardCharsets.UTF_8));
                        }
                    } else {
                        names[n++] = c.nameStart;
                        names[n++] = c.nameEnd;
                    }
                }
                if (many != null && !many.add(c.name())) {
                    return new NameProblem(c.name(), true);
                }
            }
            if (deep && (c.type == DOCUMENT || c.type == ARRAY)) {
                NameProblem inner = nameProblem(buf, c.valueStart, c.valueEnd, c.type == ARRAY, depth + 1, true);
                if (inner != null) {
                    return array ? inner : new NameProblem(inner.path().isEmpty() ? c.name()
                            : c.name() + "." + inner.path(), inner.duplicate());
                }
            }
        }
        return null;
    }

    /**
     * Checks that buf[start, end) is exactly one well-formed value of this type, all the way down
     * (documents and arrays recursively, to {@code maxDepth} levels): what the proxy encrypts must
     * decode again, and what it decrypts must be a value before it reaches a client.
     */
    public static void validate(byte type, byte[] buf, int start, int end, int maxDepth) {
        if (type == DOCUMENT || type == ARRAY) {
            if (maxDepth <= 0) {
                throw new BSONException("documents nested too deeply to decode");
            }
            BsonCursor c = new BsonCursor(buf, start, end);
            if (c.end + 1 != end) {
                throw new BSONException("a document is shorter than its value");
            }
            while (c.next()) {
                validate(c.type, buf, c.valueStart, c.valueEnd, maxDepth - 1);
            }
            return;
        }
        if (type == 0x0F) { // code with scope: its string and its scope document
            int len = valueLength(type, buf, start, end);
            int str = stringLength(buf, start + 4, end);
            if (len != end - start || 4 + str > len) {
                throw new BSONException("a code-with-scope value is malformed");
            }
            validate(DOCUMENT, buf, start + 4 + str, end, maxDepth - 1);
            return;
        }
        if (valueLength(type, buf, start, end) != end - start) {
            throw new BSONException("a value of type 0x" + Integer.toHexString(type & 0xff) + " does not fill its "
                    + (end - start) + " bytes");
        }
    }
}
