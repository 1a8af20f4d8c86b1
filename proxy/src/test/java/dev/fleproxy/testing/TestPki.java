package dev.fleproxy.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObject;

/** A test CA and the certificates tests need (server names, client, expired), written as PEM files. */
public final class TestPki {
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A certificate, its key, and where they were written. */
    public record Issued(X509Certificate cert, KeyPair keys, Path certFile, Path keyFile) {
    }

    private final KeyPair caKeys;
    private final X509Certificate caCert;
    private final Path dir;
    public final Path caFile;

    public TestPki(Path dir, String name) throws Exception {
        this.dir = dir;
        this.caKeys = rsa();
        Instant now = Instant.now().minus(Duration.ofMinutes(5));
        X500Name n = new X500Name("CN=" + name);
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(n, serial(), Date.from(now),
                Date.from(now.plus(Duration.ofDays(30))), n, caKeys.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
        caCert = sign(b, caKeys);
        caFile = dir.resolve(name + "-ca.pem");
        Files.writeString(caFile, pem(caCert));
    }

    /** A server certificate for these names (IP addresses or DNS names), valid now or, with expired, a week ago. */
    public Issued server(String file, boolean expired, String... names) throws Exception {
        return issue(file, "server", expired, names);
    }

    public Issued client(String file, String cn) throws Exception {
        return issue(file, cn, false);
    }

    /**
     * A certificate for 127.0.0.1 with a new key of this algorithm ({@code RSA}, or {@code EC} on
     * P-256), valid from {@code from} until {@code to}: for tests of the certificate itself.
     */
    public Issued issue(String file, String algorithm, Instant from, Instant to) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
        g.initialize(algorithm.equals("EC") ? 256 : 2048, RANDOM);
        return issue(file, "server", g.generateKeyPair(), from, to, "127.0.0.1");
    }

    private Issued issue(String file, String cn, boolean expired, String... names) throws Exception {
        Instant from = Instant.now().minus(expired ? Duration.ofDays(10) : Duration.ofMinutes(5));
        Instant to = expired ? Instant.now().minus(Duration.ofDays(3)) : Instant.now().plus(Duration.ofDays(30));
        return issue(file, cn, rsa(), from, to, names);
    }

    private Issued issue(String file, String cn, KeyPair k, Instant from, Instant to, String... names) throws Exception {
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(new X500Name(caCert.getSubjectX500Principal()
                .getName()), serial(), Date.from(from), Date.from(to), new X500Name("CN=" + cn), k.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        if (names.length > 0) {
            List<GeneralName> alt = new ArrayList<>();
            for (String n : names) {
                alt.add(new GeneralName(n.matches("[0-9.]+") ? GeneralName.iPAddress : GeneralName.dNSName, n));
            }
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(alt.toArray(new GeneralName[0])));
        }
        X509Certificate cert = sign(b, caKeys);
        Path certFile = dir.resolve(file + ".pem");
        Path keyFile = dir.resolve(file + ".key");
        Files.writeString(certFile, pem(cert));
        Files.writeString(keyFile, pem(new PemObject("PRIVATE KEY", k.getPrivate().getEncoded())));
        return new Issued(cert, k, certFile, keyFile);
    }

    /** A client-side SSLContext trusting this CA, presenting {@code identity} if given. */
    public SSLContext clientContext(Issued identity) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", caCert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (identity != null) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("me", identity.keys().getPrivate(), new char[0],
                    new java.security.cert.Certificate[] {identity.cert(), caCert});
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, new char[0]);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    /** A server-side SSLContext presenting {@code identity} (built as {@link #clientContext} is). */
    public SSLContext serverContext(Issued identity) throws Exception {
        return clientContext(identity);
    }

    private static KeyPair rsa() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048, RANDOM);
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(64, RANDOM);
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(b.build(
                new JcaContentSignerBuilder("SHA256withRSA").build(signer.getPrivate())));
    }

    private static String pem(Object o) throws IOException {
        StringWriter w = new StringWriter();
        try (JcaPEMWriter p = new JcaPEMWriter(w)) {
            p.writeObject(o);
        }
        return w.toString();
    }
}
