package dev.fleproxy.crypto;

/**
 * GHASH (NIST SP 800-38D §6.4) for one hash subkey H, with 8-bit tables: T[i][b] = (byte b at
 * position i)·H, so a multiplication is 16 lookups of two longs. The tables (64 KB) depend on
 * H only and are shared by all threads; the running value lives in the caller's two longs,
 * never in a byte array. Lookups depend on data, as in Bouncy Castle's and OpenSSL's table GHASH.
 */
final class Ghash {
    /** hi/lo halves of T[i][b] at index i * 256 + b. */
    private final long[] hi = new long[16 * 256];
    private final long[] lo = new long[16 * 256];

    Ghash(byte[] h) {
        long hh = load(h, 0);
        long hl = load(h, 8);
        for (int i = 0; i < 16; i++) {
            for (int bit = 0; bit < 8; bit++) {
                // the element with only bit `bit` (MSB first) of byte i set, times H
                long xh = 0;
                long xl = 0;
                int pos = i * 8 + bit;
                if (pos < 64) {
                    xh = 1L << (63 - pos);
                } else {
                    xl = 1L << (127 - pos);
                }
                long[] p = multiply(xh, xl, hh, hl);
                int b = 0x80 >>> bit;
                hi[i * 256 + b] = p[0];
                lo[i * 256 + b] = p[1];
            }
            // fill the rest by linearity: T[b] = T[highest bit of b] ^ T[the other bits]
            for (int b = 1; b < 256; b++) {
                int top = Integer.highestOneBit(b);
                if (top != b) {
                    hi[i * 256 + b] = hi[i * 256 + top] ^ hi[i * 256 + (b ^ top)];
                    lo[i * 256 + b] = lo[i * 256 + top] ^ lo[i * 256 + (b ^ top)];
                }
            }
        }
    }

    /** The bit-by-bit product of SP 800-38D Algorithm 1, used only to build the tables. */
    static long[] multiply(long xh, long xl, long yh, long yl) {
        long zh = 0;
        long zl = 0;
        long vh = yh;
        long vl = yl;
        for (int i = 0; i < 128; i++) {
            long bit = i < 64 ? (xh >>> (63 - i)) & 1 : (xl >>> (127 - i)) & 1;
            if (bit != 0) {
                zh ^= vh;
                zl ^= vl;
            }
            long carry = vl & 1;
            vl = (vl >>> 1) | (vh << 63);
            vh >>>= 1;
            if (carry != 0) {
                vh ^= 0xE100000000000000L;
            }
        }
        return new long[] {zh, zl};
    }

    static long load(byte[] b, int off) {
        return BigEndian.getLong(b, off);
    }

    static void store(long v, byte[] b, int off) {
        BigEndian.putLong(b, off, v);
    }

    /** The running value Y of one GHASH computation. */
    static final class State {
        long yh;
        long yl;
    }

    /** Y = (Y ^ X)·H for one 16-byte block X = (xh, xl). */
    void update(State s, long xh, long xl) {
        long a = s.yh ^ xh;
        long b = s.yl ^ xl;
        final long[] th = hi;
        final long[] tl = lo;
        long zh = th[(int) (a >>> 56)] ^ th[256 + (int) ((a >>> 48) & 0xff)]
                ^ th[512 + (int) ((a >>> 40) & 0xff)] ^ th[768 + (int) ((a >>> 32) & 0xff)]
                ^ th[1024 + (int) ((a >>> 24) & 0xff)] ^ th[1280 + (int) ((a >>> 16) & 0xff)]
                ^ th[1536 + (int) ((a >>> 8) & 0xff)] ^ th[1792 + (int) (a & 0xff)]
                ^ th[2048 + (int) (b >>> 56)] ^ th[2304 + (int) ((b >>> 48) & 0xff)]
                ^ th[2560 + (int) ((b >>> 40) & 0xff)] ^ th[2816 + (int) ((b >>> 32) & 0xff)]
                ^ th[3072 + (int) ((b >>> 24) & 0xff)] ^ th[3328 + (int) ((b >>> 16) & 0xff)]
                ^ th[3584 + (int) ((b >>> 8) & 0xff)] ^ th[3840 + (int) (b & 0xff)];
        long zl = tl[(int) (a >>> 56)] ^ tl[256 + (int) ((a >>> 48) & 0xff)]
                ^ tl[512 + (int) ((a >>> 40) & 0xff)] ^ tl[768 + (int) ((a >>> 32) & 0xff)]
                ^ tl[1024 + (int) ((a >>> 24) & 0xff)] ^ tl[1280 + (int) ((a >>> 16) & 0xff)]
                ^ tl[1536 + (int) ((a >>> 8) & 0xff)] ^ tl[1792 + (int) (a & 0xff)]
                ^ tl[2048 + (int) (b >>> 56)] ^ tl[2304 + (int) ((b >>> 48) & 0xff)]
                ^ tl[2560 + (int) ((b >>> 40) & 0xff)] ^ tl[2816 + (int) ((b >>> 32) & 0xff)]
                ^ tl[3072 + (int) ((b >>> 24) & 0xff)] ^ tl[3328 + (int) ((b >>> 16) & 0xff)]
                ^ tl[3584 + (int) ((b >>> 8) & 0xff)] ^ tl[3840 + (int) (b & 0xff)];
        s.yh = zh;
        s.yl = zl;
    }

    /** Absorbs len bytes, zero-padding the last partial block (GHASH's input is block-padded). */
    void absorb(State s, byte[] in, int off, int len) {
        int full = off + (len & ~15);
        for (int i = off; i < full; i += 16) {
            update(s, load(in, i), load(in, i + 8));
        }
        int rest = len & 15;
        if (rest > 0) {
            byte[] last = new byte[16];
            System.arraycopy(in, full, last, 0, rest);
            update(s, load(last, 0), load(last, 8));
        }
    }
}
