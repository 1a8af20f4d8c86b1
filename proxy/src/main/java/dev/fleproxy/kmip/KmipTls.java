package dev.fleproxy.kmip;

import dev.fleproxy.crypto.PemFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS context for mutual authentication with the KMS: trust only the configured CA, and
 * present the client certificate from PEM files (certificate + PKCS#8 key) or a PKCS#12 file.
 * Connections offer TLS 1.3 and 1.2 (PyKMIP speaks 1.2 only) and verify that the KMS's certificate
 * names the host connected to, or the configured server name ({@link #configure}).
 */
public final class KmipTls {
    /** The protocols offered to the KMS, best first. */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    private static final Pattern IPV4 = Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
            + "(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");

    private KmipTls() {
    }

    /**
     * Prepares a client socket before its handshake: the protocols, endpoint identification (the
     * KMS's certificate must name {@code expectedName}: an IP address SAN for an IP address, a DNS
     * SAN for a name) and, for a DNS name, SNI.
     */
    public static void configure(SSLSocket socket, String expectedName) {
        SSLParameters p = socket.getSSLParameters();
        p.setProtocols(PROTOCOLS.toArray(new String[0]));
        p.setEndpointIdentificationAlgorithm("HTTPS");
        if (isDnsName(expectedName)) {
            p.setServerNames(List.of(new SNIHostName(expectedName)));
        }
        socket.setSSLParameters(p);
    }

    /** An IPv4 dotted quad or an IPv6 literal (with or without brackets); no name lookup. */
    public static boolean isIpLiteral(String s) {
        if (IPV4.matcher(s).matches()) {
            return true;
        }
        String v6 = s.startsWith("[") && s.endsWith("]") ? s.substring(1, s.length() - 1) : s;
        if (!v6.contains(":") || !v6.matches("[0-9A-Fa-f:.]+")) {
            return false;
        }
        try {
            return java.net.InetAddress.getByName(v6) instanceof java.net.Inet6Address; // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /** A name that can be sent as SNI and matched against a DNS SAN. */
    public static boolean isDnsName(String s) {
        if (s.isEmpty() || s.length() > 253 || isIpLiteral(s)) {
            return false;
        }
        try {
            new SNIHostName(s);
        } catch (IllegalArgumentException e) {
            return false;
        }
        return s.matches("(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");
    }

    /** Client identity from PEM: a certificate (chain) file and an unencrypted PKCS#8 key file. */
    public static SSLContext fromPem(Path caPem, Path certPem, Path keyPem) {
        try {
            List<X509Certificate> chain = PemFiles.certificates(certPem);
            PrivateKey key = PemFiles.privateKey(keyPem, "RSA", "EC", "Ed25519");
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
        for (Certificate ca : PemFiles.certificates(caPem)) {
            trust.setCertificateEntry("ca" + i++, ca);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(identity, password);
        SSLContext ctx = SSLContext.getInstance("TLS"); // the protocols are chosen per socket: PROTOCOLS
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }
}
