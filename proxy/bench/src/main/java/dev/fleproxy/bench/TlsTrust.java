package dev.fleproxy.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The client's trust for targets reached over TLS: an SSLContext that trusts the certificates of
 * one PEM file (a CA, such as the KMS's ca.pem that {@code kms proxy-tls} issues the proxy's
 * certificate from) and nothing else. Host names stay verified: the driver checks the server's
 * certificate against the host it connects to.
 */
final class TlsTrust {
    private TlsTrust() {
    }

    /** Throws IllegalArgumentException naming the file and what is wrong with it. */
    static SSLContext trusting(Path pem) {
        List<Certificate> certs;
        try (InputStream in = Files.newInputStream(pem)) {
            Collection<? extends Certificate> read = CertificateFactory.getInstance("X.509").generateCertificates(in);
            certs = new ArrayList<>(read);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(pem + " is missing");
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(pem + " is not a PEM certificate file: " + e.getMessage());
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException(pem + " holds no certificate");
        }
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            for (int i = 0; i < certs.size(); i++) {
                trust.setCertificateEntry("ca" + i, certs.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot build a trust store from " + pem + ": " + e.getMessage(), e);
        }
    }
}
