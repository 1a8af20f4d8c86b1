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

    private static void increment32(byte[] c) {
        for (int i = 15; i >= 12; i--) {
            if (++c[i] != 0) {
                return;
            }
        }
    }

    /** XORs len bytes of in with the keystream from counter = inc32(J0) onwards into out. */
    private static void ctr(State s, byte[] in, int inOff, int len, byte[] out, int outOff) {
        byte[] c = s.counter;
        byte[] ks = s.keystream;
        for (int done = 0; done < len; done += 16) {
            increment32(c);
            s.engine.processBlock(c, 0, ks, 0);
            int n = Math.min(16, len - done);
            for (int j = 0; j < n; j++) {
                out[outOff + done + j] = (byte) (in[inOff + done + j] ^ ks[j]);
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
