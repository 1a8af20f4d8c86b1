package dev.fleproxy.crypto;

import java.security.GeneralSecurityException;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * AES-GCM from the JDK's provider, which uses AES-NI and carry-less multiplication. The JDK keeps
 * the expanded key across init() calls with the same key, so one Cipher per thread suffices. The
 * JDK compares each encryption nonce with the previous encryption's only, so decryptions are not
 * recorded in the guard.
 */
final class JceAesGcm implements NonceAead {
    static final int NONCE = 12;
    static final int TAG_BITS = 128;

    private final SecretKeySpec key;
    private final boolean repeatsNonces;
    private final ThreadLocal<State> states;

    private static final class State {
        final Cipher cipher;
        final NonceReuseGuard guard = new NonceReuseGuard(NONCE);

        State(Cipher cipher) {
            this.cipher = cipher;
        }
    }

    /**
     * @param repeatsNonces true for the deterministic variant, whose nonces repeat by design; with
     *     random nonces a repeat would be a catastrophe, and the JDK's refusal is then welcome.
     */
    JceAesGcm(byte[] keyBytes, boolean repeatsNonces) {
        this.key = new SecretKeySpec(keyBytes, "AES");
        this.repeatsNonces = repeatsNonces;
        this.states = ThreadLocal.withInitial(() -> {
            try {
                return new State(Cipher.getInstance("AES/GCM/NoPadding"));
            } catch (GeneralSecurityException e) {
                throw new CryptoException("AES/GCM is not available: " + e.getMessage(), e);
            }
        });
    }

    @Override
    public int seal(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                    byte[] pt, int ptOff, int ptLen, byte[] out, int outOff) {
        State s = states.get();
        try {
            if (repeatsNonces && s.guard.repeats(nonce, nonceOff)) {
                s.cipher.init(Cipher.ENCRYPT_MODE, key,
                        new GCMParameterSpec(TAG_BITS, NonceReuseGuard.other(nonce, nonceOff, NONCE)));
            }
            s.cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce, nonceOff, NONCE));
            s.cipher.updateAAD(aad, aadOff, aadLen);
            return s.cipher.doFinal(pt, ptOff, ptLen, out, outOff);
        } catch (GeneralSecurityException e) {
            throw new CryptoException("AES-GCM encryption failed: " + e.getClass().getSimpleName(), e);
        }
    }

    @Override
    public byte[] open(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                       byte[] ct, int ctOff, int ctLen) {
        State s = states.get();
        try {
            s.cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce, nonceOff, NONCE));
            s.cipher.updateAAD(aad, aadOff, aadLen);
            return s.cipher.doFinal(ct, ctOff, ctLen);
        } catch (AEADBadTagException e) {
            throw new DecryptionFailedException();
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new DecryptionFailedException();
        }
    }
}
