package dev.fleproxy.crypto;

import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.modes.GCMModeCipher;
import org.bouncycastle.crypto.modes.gcm.Tables64kGCMMultiplier;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import java.util.function.Supplier;

/**
 * GCM over a Bouncy Castle block cipher (ARIA, LEA). The key is given once per thread; later
 * init() calls pass a null key, which keeps the cipher's key schedule and GHASH tables (re-keying
 * per operation costs ARIA about 2×). 64 KB GHASH tables: the fastest of Bouncy Castle's
 * multipliers, measured here, and a few per key and thread are affordable.
 */
final class BcGcm implements NonceAead {
    static final int NONCE = 12;
    static final int TAG_BITS = 128;

    private final ThreadLocal<State> states;

    private static final class State {
        final GCMModeCipher gcm;
        final NonceReuseGuard guard = new NonceReuseGuard(NONCE);

        State(GCMModeCipher gcm) {
            this.gcm = gcm;
        }
    }

    @SuppressWarnings("deprecation") // the constructor taking a multiplier is the way to choose the tables
    BcGcm(Supplier<BlockCipher> engines, byte[] keyBytes) {
        byte[] key = keyBytes.clone();
        this.states = ThreadLocal.withInitial(() -> {
            GCMModeCipher gcm = new GCMBlockCipher(engines.get(), new Tables64kGCMMultiplier());
            byte[] first = new byte[NONCE];
            gcm.init(false, new AEADParameters(new KeyParameter(key), TAG_BITS, first));
            State s = new State(gcm);
            s.guard.repeats(first, 0);
            return s;
        });
    }

    private static AEADParameters params(byte[] nonce) {
        return new AEADParameters(null, TAG_BITS, nonce);
    }

    @Override
    public int seal(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                    byte[] pt, int ptOff, int ptLen, byte[] out, int outOff) {
        State s = states.get();
        if (s.guard.repeats(nonce, nonceOff)) {
            s.gcm.init(true, params(NonceReuseGuard.other(nonce, nonceOff, NONCE)));
        }
        s.gcm.init(true, params(java.util.Arrays.copyOfRange(nonce, nonceOff, nonceOff + NONCE)));
        s.gcm.processAADBytes(aad, aadOff, aadLen);
        int n = s.gcm.processBytes(pt, ptOff, ptLen, out, outOff);
        try {
            return n + s.gcm.doFinal(out, outOff + n);
        } catch (InvalidCipherTextException e) {
            throw new CryptoException("GCM encryption failed", e);
        }
    }

    @Override
    public byte[] open(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                       byte[] ct, int ctOff, int ctLen) {
        if (ctLen < TAG_BITS / 8) {
            throw new DecryptionFailedException();
        }
        State s = states.get();
        s.guard.repeats(nonce, nonceOff);
        s.gcm.init(false, params(java.util.Arrays.copyOfRange(nonce, nonceOff, nonceOff + NONCE)));
        s.gcm.processAADBytes(aad, aadOff, aadLen);
        byte[] pt = new byte[ctLen - TAG_BITS / 8];
        int n = s.gcm.processBytes(ct, ctOff, ctLen, pt, 0);
        try {
            s.gcm.doFinal(pt, n);
        } catch (InvalidCipherTextException | IllegalStateException e) {
            java.util.Arrays.fill(pt, (byte) 0);
            throw new DecryptionFailedException();
        }
        return pt;
    }
}
