package dev.fleproxy.crypto;

import java.util.UUID;

/**
 * Key material with its identity and algorithm, as resolved from the KMS. {@link #toString}
 * never shows the material.
 */
public final class DataKey {
    private final UUID id;
    private final CipherAlgorithm algorithm;
    private final byte[] material;

    public DataKey(UUID id, CipherAlgorithm algorithm, byte[] material) {
        if (!algorithm.acceptsKeyLength(material.length)) {
            throw new CryptoException("key " + id + " is " + material.length * 8 + " bits; " + algorithm
                    + " keys must be " + algorithm.keyLengthsInBits() + " bits");
        }
        this.id = id;
        this.algorithm = algorithm;
        this.material = material.clone();
    }

    public UUID id() {
        return id;
    }

    public CipherAlgorithm algorithm() {
        return algorithm;
    }

    public int bits() {
        return material.length * 8;
    }

    /** A copy of the key bytes; for building ciphers, never for logging. */
    byte[] material() {
        return material.clone();
    }

    @Override
    public String toString() {
        return "DataKey(" + id + ", " + algorithm + "-" + bits() + ")";
    }
}
