package dev.fleproxy.crypto;

import java.util.Arrays;

/** The block ciphers a data key can be for; the key's algorithm picks the collection's cipher. */
public enum CipherAlgorithm {
    AES(16, 16, 24, 32),
    ARIA(16, 16, 24, 32),
    LEA(16, 16, 24, 32),
    SEED(16, 16),
    /** DES-EDE3 with three independent keys (24 bytes); for comparison and legacy data only. */
    TRIPLE_DES(8, 24);

    private final int blockSize;
    private final int[] keyLengths;

    CipherAlgorithm(int blockSize, int... keyLengths) {
        this.blockSize = blockSize;
        this.keyLengths = keyLengths;
    }

    public int blockSize() {
        return blockSize;
    }

    public boolean acceptsKeyLength(int bytes) {
        return Arrays.stream(keyLengths).anyMatch(l -> l == bytes);
    }

    /** Key lengths in bits, for messages: "128/192/256". */
    public String keyLengthsInBits() {
        StringBuilder s = new StringBuilder();
        for (int l : keyLengths) {
            s.append(s.length() == 0 ? "" : "/").append(l * 8);
        }
        return s.toString();
    }
}
