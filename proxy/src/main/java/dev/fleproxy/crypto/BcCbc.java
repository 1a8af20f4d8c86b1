package dev.fleproxy.crypto;

import java.util.Arrays;
import java.util.function.Supplier;
import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.params.KeyParameter;

/**
 * CBC-PKCS#7 over a Bouncy Castle block cipher (ARIA, SEED, DES-EDE3), written out here rather
 * than through PaddedBufferedBlockCipher so that blocks go straight from input to output: per
 * thread, one engine keyed for encryption and one for decryption, each keyed once.
 */
final class BcCbc implements CbcCipher {
    private final int block;
    private final ThreadLocal<State> states;

    private static final class State {
        final BlockCipher encryptor;
        final BlockCipher decryptor;
        final byte[] chain;
        final byte[] tmp;

        State(BlockCipher encryptor, BlockCipher decryptor, int block) {
            this.encryptor = encryptor;
            this.decryptor = decryptor;
            this.chain = new byte[block];
            this.tmp = new byte[block];
        }
    }

    BcCbc(Supplier<BlockCipher> engines, byte[] keyBytes) {
        byte[] key = keyBytes.clone();
        this.block = engines.get().getBlockSize();
        this.states = ThreadLocal.withInitial(() -> {
            BlockCipher enc = engines.get();
            enc.init(true, new KeyParameter(key));
            BlockCipher dec = engines.get();
            dec.init(false, new KeyParameter(key));
            return new State(enc, dec, block);
        });
    }

    @Override
    public int encrypt(byte[] iv, int ivOff, byte[] pt, int ptOff, int ptLen, byte[] out, int outOff) {
        State s = states.get();
        byte[] chain = s.chain;
        BlockCipher e = s.encryptor;
        // chain = previous ciphertext block (the IV first) XOR the next plaintext block
        for (int j = 0; j < block; j++) {
            chain[j] = iv[ivOff + j];
        }
        int full = ptLen - ptLen % block;
        int o = outOff;
        for (int i = 0; i < full; i += block, o += block) {
            xorInto(chain, pt, ptOff + i, block);
            e.processBlock(chain, 0, out, o);
            System.arraycopy(out, o, chain, 0, block);
        }
        // Last block: the remaining bytes and PKCS#7 padding (a whole block of it if none remain).
        int rest = ptLen - full;
        byte pad = (byte) (block - rest);
        for (int j = 0; j < block; j++) {
            chain[j] ^= j < rest ? pt[ptOff + full + j] : pad;
        }
        e.processBlock(chain, 0, out, o);
        return full + block;
    }

    /** dst[0, n) ^= src[srcOff, srcOff + n), n being 8 or 16. */
    private static void xorInto(byte[] dst, byte[] src, int srcOff, int n) {
        xorInto(dst, 0, src, srcOff, n);
    }

    private static void xorInto(byte[] dst, int dstOff, byte[] src, int srcOff, int n) {
        BigEndian.putLong(dst, dstOff, BigEndian.getLong(dst, dstOff) ^ BigEndian.getLong(src, srcOff));
        if (n == 16) {
            BigEndian.putLong(dst, dstOff + 8, BigEndian.getLong(dst, dstOff + 8) ^ BigEndian.getLong(src, srcOff + 8));
        }
    }

    @Override
    public byte[] decrypt(byte[] iv, int ivOff, byte[] ct, int ctOff, int ctLen) {
        if (ctLen == 0 || ctLen % block != 0) {
            throw new DecryptionFailedException();
        }
        State s = states.get();
        // The last block first: its padding says how long the plaintext is, so the output is
        // allocated once at its exact size and the other blocks are decrypted straight into it.
        int lastOff = ctOff + ctLen - block;
        byte[] prevOfLast = ctLen == block ? iv : ct;
        int prevOfLastOff = ctLen == block ? ivOff : lastOff - block;
        byte[] last = s.tmp;
        s.decryptor.processBlock(ct, lastOff, last, 0);
        for (int j = 0; j < block; j++) {
            last[j] ^= prevOfLast[prevOfLastOff + j];
        }
        // Constant-time padding check. The tag was verified before we got here, so a bad pad
        // means a wrong key or a bug, and it is reported exactly like any other failure.
        int pad = last[block - 1] & 0xff;
        int bad = ((pad - 1) >>> 31) | ((block - pad) >>> 31);
        for (int j = 0; j < block; j++) {
            int inPad = (j - pad) >>> 31;
            int diff = (last[block - 1 - j] & 0xff) ^ pad;
            bad |= inPad & ((diff | -diff) >>> 31);
        }
        if (bad != 0) {
            Arrays.fill(last, (byte) 0);
            throw new DecryptionFailedException();
        }
        byte[] out = new byte[ctLen - pad];
        int full = ctLen - block;
        BlockCipher d = s.decryptor;
        for (int i = 0; i < full; i += block) {
            d.processBlock(ct, ctOff + i, out, i);
            if (i == 0) {
                xorInto(out, 0, iv, ivOff, block);
            } else {
                xorInto(out, i, ct, ctOff + i - block, block);
            }
        }
        System.arraycopy(last, 0, out, full, block - pad);
        Arrays.fill(last, (byte) 0);
        return out;
    }
}
