package dev.fleproxy.kmip;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS 1.2 context for mutual authentication with the KMS: trust only the configured CA, and
 * present the client certificate from PEM files (certificate + PKCS#8 key) or a PKCS#12 file.
 */
public final class KmipTls {
    private KmipTls() {
    }

    /** Client identity from PEM: a certificate (chain) file and an unencrypted PKCS#8 key file. */
    public static SSLContext fromPem(Path caPem, Path certPem, Path keyPem) {
        try {
            List<Certificate> chain = certificates(certPem);
            PrivateKey key = privateKey(keyPem);
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("client", key, new char[0], chain.toArray(new Certificate[0]));
            return context(caPem, ks, new char[0]);
        } catch (IOException | GeneralSecurityException e) {
            throw new KmipException("cannot load the KMIP client certificate/key (" + certPem + ", " + keyPem + "): "
                    + e.getMessage(), e);
        }
    }

    /** Client identity from a PKCS#12 file. */
    public static SSLContext fromPkcs12(Path caPem, Path p12, char[] password) {
        try (InputStream in = Files.newInputStream(p12)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password);
            return context(caPem, ks, password);
        } catch (IOException | GeneralSecurityException e) {
            throw new KmipException("cannot load the KMIP client keystore " + p12 + ": " + e.getMessage(), e);
        }
    }

    private static SSLContext context(Path caPem, KeyStore identity, char[] password)
            throws IOException, GeneralSecurityException {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        int i = 0;
        for (Certificate ca : certificates(caPem)) {
            trust.setCertificateEntry("ca" + i++, ca);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(identity, password);
        SSLContext ctx = SSLContext.getInstance("TLSv1.2");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    static List<Certificate> certificates(Path pem) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        try (InputStream in = Files.newInputStream(pem)) {
            List<Certificate> certs = new ArrayList<>(cf.generateCertificates(in));
            if (certs.isEmpty()) {
                throw new GeneralSecurityException("no certificate in " + pem);
            }
            return certs;
        }
    }

    static PrivateKey privateKey(Path pem) throws IOException, GeneralSecurityException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        String begin = "-----BEGIN PRIVATE KEY-----";
        int start = text.indexOf(begin);
        int end = text.indexOf("-----END PRIVATE KEY-----");
        if (start < 0 || end < 0) {
            throw new GeneralSecurityException(pem + " is not an unencrypted PKCS#8 PEM key (BEGIN PRIVATE KEY)");
        }
        byte[] der = Base64.getMimeDecoder().decode(text.substring(start + begin.length(), end));
        for (String alg : new String[] {"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        throw new GeneralSecurityException(pem + " holds a key of an unsupported algorithm");
    }
}
