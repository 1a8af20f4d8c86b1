package dev.fleproxy.tls;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.PemFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.time.Instant;

/**
 * Whether a certificate file and a key file can serve TLS now: the key is the leaf certificate's
 * and the leaf is within its validity period. Netty loads a certificate with a stranger's key
 * without complaint, and every handshake then fails with an internal error; it serves an expired
 * certificate without a word. Messages name the files and dates, never key material.
 */
public final class KeyPairCheck {
    private static final byte[] PROBE = "mongo-fle-proxy: does this key belong to this certificate?"
            .getBytes(StandardCharsets.US_ASCII);

    private KeyPairCheck() {
    }

    /**
     * The leaf certificate, if the pair is usable at {@code now}; else a {@link ConfigException}
     * starting with {@code section} (the config key: {@code tls}, {@code upstreamTls}).
     */
    public static X509Certificate check(String section, Path certFile, Path keyFile, Instant now) {
        X509Certificate leaf;
        PrivateKey key;
        try {
            leaf = PemFiles.certificates(certFile).get(0);
            String algorithm = leaf.getPublicKey().getAlgorithm();
            try {
                key = PemFiles.privateKey(keyFile, algorithm);
            } catch (InvalidKeySpecException e) {
                throw mismatch(section, certFile, keyFile, "it is not an " + algorithm + " key, as the certificate's is");
            }
            if (!verifies(key, leaf)) {
                throw mismatch(section, certFile, keyFile,
                        "a signature made with the key does not verify with the certificate's public key");
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigException(section + ": cannot check " + certFile + " / " + keyFile + ": " + e.getMessage(), e);
        }
        Instant from = leaf.getNotBefore().toInstant();
        Instant until = leaf.getNotAfter().toInstant();
        if (now.isBefore(from)) {
            throw new ConfigException(section + ": the certificate " + certFile + " is not valid yet: valid from " + from
                    + " (now " + now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ")");
        }
        if (now.isAfter(until)) {
            throw new ConfigException(section + ": the certificate " + certFile + " has expired: valid until " + until
                    + " (now " + now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ")");
        }
        return leaf;
    }

    private static ConfigException mismatch(String section, Path certFile, Path keyFile, String why) {
        return new ConfigException(section + ": the key " + keyFile + " does not belong to the certificate " + certFile
                + ": " + why);
    }

    /**
     * Signs a fixed message with the key and verifies it with the certificate's public key: one
     * test for every algorithm, where comparing moduli or curve points would need one per algorithm.
     */
    private static boolean verifies(PrivateKey key, X509Certificate leaf) throws GeneralSecurityException {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "DSA" -> "SHA256withDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448, EdDSA: the signature is named as the key
        };
        Signature signer = Signature.getInstance(algorithm);
        signer.initSign(key);
        signer.update(PROBE);
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(leaf.getPublicKey());
        verifier.update(PROBE);
        try {
            return verifier.verify(signature);
        } catch (SignatureException e) {
            return false; // a signature of another key's size or shape
        }
    }
}
