package dev.fleproxy.crypto;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Certificates and keys from the PEM files a config names: a certificate chain (leaf first) and
 * an unencrypted PKCS#8 key ({@code BEGIN PRIVATE KEY}), the formats docs/operations.md documents.
 */
public final class PemFiles {
    private PemFiles() {
    }

    /** Every certificate in the file, in its order; at least one. */
    public static List<X509Certificate> certificates(Path pem) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        try (InputStream in = Files.newInputStream(pem)) {
            List<X509Certificate> certs = new ArrayList<>();
            cf.generateCertificates(in).forEach(c -> certs.add((X509Certificate) c));
            if (certs.isEmpty()) {
                throw new GeneralSecurityException("no certificate in " + pem);
            }
            return certs;
        }
    }

    /**
     * The key in the file, read as the first of these algorithms (JCA names: RSA, EC, …) it decodes
     * as; {@link InvalidKeySpecException} if it is a key of none of them.
     */
    public static PrivateKey privateKey(Path pem, String... algorithms) throws IOException, GeneralSecurityException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        String begin = "-----BEGIN PRIVATE KEY-----";
        int start = text.indexOf(begin);
        int end = text.indexOf("-----END PRIVATE KEY-----");
        if (start < 0 || end < 0) {
            throw new GeneralSecurityException(pem + " is not an unencrypted PKCS#8 PEM key (BEGIN PRIVATE KEY)");
        }
        byte[] der = Base64.getMimeDecoder().decode(text.substring(start + begin.length(), end));
        for (String alg : algorithms) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        // a key of another algorithm than asked for, told apart from a file that is no key at all
        throw new InvalidKeySpecException(pem + " holds no " + String.join(" or ", algorithms) + " key");
    }
}
