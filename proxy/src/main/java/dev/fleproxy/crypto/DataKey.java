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

    /**
     * The first 8 bytes of SHA-256 of the material, in hex: enough to tell keys apart and to check
     * that two clients got the same bytes, without showing them.
     */
    public String fingerprint() {
        try {
            byte[] h = java.security.MessageDigest.getInstance("SHA-256").digest(material);
            return java.util.HexFormat.of().formatHex(h, 0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
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
