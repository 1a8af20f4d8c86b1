package dev.fleproxy.crypto;

import java.util.function.Supplier;
import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.params.KeyParameter;

/**
 * GCM (NIST SP 800-38D) over any 128-bit block cipher, for ARIA and LEA: CTR encryption with the
 * block cipher and {@link Ghash}. Written here rather than taken from Bouncy Castle's
 * GCMBlockCipher, which copies every byte through an internal buffer: measured here, ARIA-GCM
 * went from about 40 to about 55 MB/s at 1 KB. Checked against Wycheproof's ARIA-GCM vectors and,
 * over AES, its AES-GCM vectors. 12-byte nonces and 16-byte tags only, as the format fixes.
 * Decryption verifies the tag (in constant time) before it decrypts anything.
 */
final class CtrGcm implements NonceAead {
    static final int NONCE = 12;
    static final int TAG = 16;

    private final Ghash ghash;
    private final ThreadLocal<State> states;

    private static final class State {
        final BlockCipher engine;
        final byte[] counter = new byte[16];
        final byte[] keystream = new byte[16];
        final byte[] tag = new byte[16];
        final Ghash.State y = new Ghash.State();

        State(BlockCipher engine) {
            this.engine = engine;
        }
    }

    CtrGcm(Supplier<BlockCipher> engines, byte[] keyBytes) {
        byte[] key = keyBytes.clone();
        BlockCipher first = engines.get();
        first.init(true, new KeyParameter(key));
        byte[] h = new byte[16];
        first.processBlock(h, 0, h, 0);
        this.ghash = new Ghash(h);
        this.states = ThreadLocal.withInitial(() -> {
            BlockCipher e = engines.get();
            e.init(true, new KeyParameter(key));
            return new State(e);
        });
    }

    /** counter = nonce ‖ 00000001 (J0). */
    private static void j0(State s, byte[] nonce, int nonceOff) {
        System.arraycopy(nonce, nonceOff, s.counter, 0, NONCE);
        s.counter[12] = 0;
        s.counter[13] = 0;
        s.counter[14] = 0;
        s.counter[15] = 1;
    }

    /** XORs len bytes of in with the keystream from counter = inc32(J0) onwards into out. */
    private static void ctr(State s, byte[] in, int inOff, int len, byte[] out, int outOff) {
        byte[] c = s.counter;
        byte[] ks = s.keystream;
        BlockCipher engine = s.engine;
        int n32 = BigEndian.getInt(c, 12);
        int full = len & ~15;
        for (int done = 0; done < full; done += 16) {
            BigEndian.putInt(c, 12, ++n32); // inc32: the low 32 bits wrap, the rest stays
            engine.processBlock(c, 0, ks, 0);
            int i = inOff + done;
            int o = outOff + done;
            BigEndian.putLong(out, o, BigEndian.getLong(in, i) ^ BigEndian.getLong(ks, 0));
            BigEndian.putLong(out, o + 8, BigEndian.getLong(in, i + 8) ^ BigEndian.getLong(ks, 8));
        }
        int rest = len - full;
        if (rest > 0) {
            BigEndian.putInt(c, 12, ++n32);
            engine.processBlock(c, 0, ks, 0);
            for (int j = 0; j < rest; j++) {
                out[outOff + full + j] = (byte) (in[inOff + full + j] ^ ks[j]);
            }
        }
    }

    /** The tag, E(J0) ^ GHASH(AAD, C, lengths), into s.tag; leaves the counter at J0. */
    private void tag(State s, byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                     byte[] ct, int ctOff, int ctLen) {
        Ghash.State y = s.y;
        y.yh = 0;
        y.yl = 0;
        ghash.absorb(y, aad, aadOff, aadLen);
        ghash.absorb(y, ct, ctOff, ctLen);
        ghash.update(y, (long) aadLen * 8, (long) ctLen * 8);
        j0(s, nonce, nonceOff);
        s.engine.processBlock(s.counter, 0, s.tag, 0);
        Ghash.store(Ghash.load(s.tag, 0) ^ y.yh, s.tag, 0);
        Ghash.store(Ghash.load(s.tag, 8) ^ y.yl, s.tag, 8);
    }

    @Override
    public int seal(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                    byte[] pt, int ptOff, int ptLen, byte[] out, int outOff) {
        State s = states.get();
        j0(s, nonce, nonceOff);
        ctr(s, pt, ptOff, ptLen, out, outOff);
        tag(s, nonce, nonceOff, aad, aadOff, aadLen, out, outOff, ptLen);
        System.arraycopy(s.tag, 0, out, outOff + ptLen, TAG);
        return ptLen + TAG;
    }

    @Override
    public byte[] open(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                       byte[] ct, int ctOff, int ctLen) {
        if (ctLen < TAG) {
            throw new DecryptionFailedException();
        }
        int bodyLen = ctLen - TAG;
        State s = states.get();
        tag(s, nonce, nonceOff, aad, aadOff, aadLen, ct, ctOff, bodyLen);
        if (!ConstantTime.equals(s.tag, 0, ct, ctOff + bodyLen, TAG)) {
            throw new DecryptionFailedException();
        }
        byte[] pt = new byte[bodyLen];
        ctr(s, ct, ctOff, bodyLen, pt, 0);
        return pt;
    }
}
