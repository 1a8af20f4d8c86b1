package dev.fleproxy.crypto;

import java.security.GeneralSecurityException;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** AES-CBC-PKCS#7 from the JDK's provider (AES-NI); one encrypting and one decrypting Cipher per thread. */
final class JceAesCbc implements CbcCipher {
    private static final int BLOCK = 16;
    private final SecretKeySpec key;
    private final ThreadLocal<Cipher> encryptors;
    private final ThreadLocal<Cipher> decryptors;

    JceAesCbc(byte[] keyBytes) {
        key = new SecretKeySpec(keyBytes, "AES");
        encryptors = ThreadLocal.withInitial(JceAesCbc::newCipher);
        decryptors = ThreadLocal.withInitial(JceAesCbc::newCipher);
    }

    private static Cipher newCipher() {
        try {
            return Cipher.getInstance("AES/CBC/PKCS5Padding");
        } catch (GeneralSecurityException e) {
            throw new CryptoException("AES/CBC is not available: " + e.getMessage(), e);
        }
    }

    @Override
    public int encrypt(byte[] iv, int ivOff, byte[] pt, int ptOff, int ptLen, byte[] out, int outOff) {
        Cipher c = encryptors.get();
        try {
            c.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(iv, ivOff, BLOCK));
            return c.doFinal(pt, ptOff, ptLen, out, outOff);
        } catch (GeneralSecurityException e) {
            throw new CryptoException("AES-CBC encryption failed: " + e.getClass().getSimpleName(), e);
        }
    }

    @Override
    public byte[] decrypt(byte[] iv, int ivOff, byte[] ct, int ctOff, int ctLen) {
        if (ctLen == 0 || ctLen % BLOCK != 0) {
            throw new DecryptionFailedException();
        }
        Cipher c = decryptors.get();
        try {
            c.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(iv, ivOff, BLOCK));
            return c.doFinal(ct, ctOff, ctLen);
        } catch (GeneralSecurityException e) {
            throw new DecryptionFailedException();
        }
    }
}
