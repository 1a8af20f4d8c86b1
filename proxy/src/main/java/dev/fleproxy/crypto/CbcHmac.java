package dev.fleproxy.crypto;

import javax.crypto.Mac;

/**
 * Encrypt-then-MAC: CBC-PKCS#7 under the key K, then tag = the first 16 bytes of
 * HMAC-SHA-256(macKey, AAD ‖ IV ‖ ciphertext), verified in constant time before anything is
 * decrypted (docs/envelope-format.md, "Sealing" and "Opening").
 */
final class CbcHmac implements NonceAead {
    static final int TAG = CipherSuite.TAG_LENGTH;
    private final CbcCipher cbc;
    private final HmacSha256 hmac;
    private final int ivLength;
    private final ThreadLocal<byte[]> scratch = ThreadLocal.withInitial(() -> new byte[HmacSha256.LENGTH]);

    CbcHmac(CbcCipher cbc, byte[] macKey, int ivLength) {
        this.cbc = cbc;
        this.hmac = new HmacSha256(macKey);
        this.ivLength = ivLength;
    }

    private byte[] tag(byte[] aad, int aadOff, int aadLen, byte[] iv, int ivOff, byte[] ct, int ctOff, int ctLen) {
        Mac mac = hmac.mac();
        mac.update(aad, aadOff, aadLen);
        mac.update(iv, ivOff, ivLength);
        mac.update(ct, ctOff, ctLen);
        byte[] full = scratch.get();
        HmacSha256.finish(mac, full, 0);
        return full;
    }

    @Override
    public int seal(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                    byte[] pt, int ptOff, int ptLen, byte[] out, int outOff) {
        int c = cbc.encrypt(nonce, nonceOff, pt, ptOff, ptLen, out, outOff);
        byte[] t = tag(aad, aadOff, aadLen, nonce, nonceOff, out, outOff, c);
        System.arraycopy(t, 0, out, outOff + c, TAG);
        return c + TAG;
    }

    @Override
    public byte[] open(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
                       byte[] ct, int ctOff, int ctLen) {
        if (ctLen < TAG + 1) {
            throw new DecryptionFailedException();
        }
        int bodyLen = ctLen - TAG;
        byte[] t = tag(aad, aadOff, aadLen, nonce, nonceOff, ct, ctOff, bodyLen);
        if (!ConstantTime.equals(t, 0, ct, ctOff + bodyLen, TAG)) {
            throw new DecryptionFailedException();
        }
        return cbc.decrypt(nonce, nonceOff, ct, ctOff, bodyLen);
    }
}
