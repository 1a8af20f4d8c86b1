package dev.fleproxy.kmip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.keys.KeyResolvers;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The KMIP client's TLS against an in-process TLS server that answers one Locate: the KMS's
 * certificate must come from the configured CA and name kmip.host (an IP SAN for an IP address),
 * or kmip.serverName when it is set; TLS 1.3 is used where the server offers it, 1.2 otherwise.
 * The certificates are made here by a test CA (Bouncy Castle).
 */
class KmipTlsTest {
    @TempDir
    static Path dir;

    private static final AtomicLong SERIAL = new AtomicLong(1);
    private static Issuer ca;
    private static Issuer otherCa;
    private static final List<Server> servers = new ArrayList<>();

    /** A CA: its key pair and certificate. */
    private record Issuer(KeyPair keys, X509Certificate cert) {
    }

    /** A leaf: key pair and certificate. */
    private record Leaf(KeyPair keys, X509Certificate cert) {
    }

    @BeforeAll
    static void makeCertificates() throws Exception {
        ca = newCa("KMIP test CA");
        otherCa = newCa("another CA");
        Leaf client = leaf(ca, "fle-proxy", null, true);
        writePem(dir.resolve("ca.pem"), "CERTIFICATE", ca.cert().getEncoded());
        writePem(dir.resolve("proxy.pem"), "CERTIFICATE", client.cert().getEncoded());
        writePem(dir.resolve("proxy.key"), "PRIVATE KEY", client.keys().getPrivate().getEncoded());
    }

    @AfterAll
    static void stopServers() {
        servers.forEach(Server::close);
    }

    @Test
    void aCertificateForAnotherNameIsRefusedWithAMessageSayingSo() throws Exception {
        Server kms = start(leaf(ca, "evil.example", new GeneralNames(dns("evil.example")), false), ca, true);
        KmipException e = assertThrows(KmipException.class, () -> locate(kms, null));
        assertTrue(e.getMessage().contains("TLS with the KMS at 127.0.0.1:" + kms.port() + " failed"), e.getMessage());
        assertTrue(e.getMessage().contains("host name mismatch: the KMS's certificate does not name 127.0.0.1 (kmip.host"),
                e.getMessage());
        assertEquals(0, kms.answered.get(), "nothing was answered");
    }

    @Test
    void withServerNameTheCertificatesNameIsCheckedAndSentAsSni() throws Exception {
        Server kms = start(leaf(ca, "evil.example", new GeneralNames(dns("evil.example")), false), ca, true);
        assertEquals(List.of("k1"), locate(kms, "evil.example"));
        assertEquals(List.of("evil.example"), kms.sni);

        KmipException e = assertThrows(KmipException.class, () -> locate(kms, "good.example"));
        assertTrue(e.getMessage().contains("does not name good.example (kmip.serverName)"), e.getMessage());
    }

    @Test
    void aCertificateWithTheIpAddressOfHostIsAccepted() throws Exception {
        Server kms = start(leaf(ca, "kms", new GeneralNames(new GeneralName[] {
            dns("localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}), false), ca, true);
        assertEquals(List.of("k1"), locate(kms, null));
        assertEquals(List.of(), kms.sni, "no SNI for an IP address");
        assertEquals(List.of("k1"), locate(kms, "localhost"), "its DNS name works as serverName");
    }

    @Test
    void anIpAddressWrittenAsADnsNameDoesNotCount() throws Exception {
        Server kms = start(leaf(ca, "127.0.0.1", new GeneralNames(dns("127.0.0.1")), false), ca, true);
        KmipException e = assertThrows(KmipException.class, () -> locate(kms, null));
        assertTrue(e.getMessage().contains("host name mismatch"), e.getMessage());
    }

    @Test
    void aCertificateFromAnotherCaIsRefused() throws Exception {
        Server kms = start(leaf(otherCa, "kms", new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")),
                false), ca, true);
        KmipException e = assertThrows(KmipException.class, () -> locate(kms, null));
        assertTrue(e.getMessage().contains("TLS with the KMS at 127.0.0.1:" + kms.port() + " failed"), e.getMessage());
        assertTrue(e.getMessage().contains("not trusted"), e.getMessage());
        assertFalse(e.getMessage().contains("host name mismatch"), e.getMessage());
    }

    @Test
    void tls13WhereTheKmsOffersItTls12ForPyKmip() throws Exception {
        Leaf cert = leaf(ca, "kms", new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")), false);
        Server modern = start(cert, ca, true);
        assertEquals(List.of("k1"), locate(modern, null));
        assertEquals(List.of("TLSv1.3"), modern.protocols);
        Server pykmip = start(cert, ca, false);
        assertEquals(List.of("k1"), locate(pykmip, null));
        assertEquals(List.of("TLSv1.2"), pykmip.protocols);
    }

    @Test
    void serverNamesAreIpLiteralsOrDnsNames() {
        assertTrue(KmipTls.isIpLiteral("127.0.0.1"));
        assertTrue(KmipTls.isIpLiteral("::1"));
        assertTrue(KmipTls.isIpLiteral("[fe80::1]"));
        assertFalse(KmipTls.isIpLiteral("256.0.0.1"));
        assertFalse(KmipTls.isIpLiteral("kms"));
        assertFalse(KmipTls.isIpLiteral("dead:beef.example"));
        assertTrue(KmipTls.isDnsName("kms"));
        assertTrue(KmipTls.isDnsName("kms-1.internal.example"));
        assertFalse(KmipTls.isDnsName("127.0.0.1"));
        assertFalse(KmipTls.isDnsName("bad name"));
        assertFalse(KmipTls.isDnsName("-kms"));
        assertFalse(KmipTls.isDnsName(""));
    }

    // --- the client, configured as the proxy configures it -------------------------------------------

    private static List<String> locate(Server kms, String serverName) {
        KmipConfig c = new KmipConfig(new KmipConfig.Server("127.0.0.1", kms.port(), serverName),
                KmipConfig.Identity.pem(dir.resolve("ca.pem"), dir.resolve("proxy.pem"), dir.resolve("proxy.key")),
                KmipConfig.Cache.of(Duration.ofMinutes(5), Duration.ofMinutes(5)), new KmipConfig.Pool(1, 5000, 5000));
        try (KmipClient client = KeyResolvers.client(c)) {
            return client.locateByName("any", null);
        }
    }

    // --- an in-process TLS server that answers every request with a Locate response ----------------------

    private static Server start(Leaf cert, Issuer trustedClientCa, boolean offerTls13) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("server", cert.keys().getPrivate(), new char[0], new Certificate[] {cert.cert()});
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", trustedClientCa.cert());
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        SSLServerSocket socket = (SSLServerSocket) ctx.getServerSocketFactory()
                .createServerSocket(0, 8, InetAddress.getLoopbackAddress());
        socket.setNeedClientAuth(true);
        socket.setEnabledProtocols(offerTls13 ? new String[] {"TLSv1.3", "TLSv1.2"} : new String[] {"TLSv1.2"});
        Server s = new Server(socket);
        servers.add(s);
        s.thread.start();
        return s;
    }

    private static final class Server implements AutoCloseable {
        final SSLServerSocket socket;
        final Thread thread = new Thread(this::serve, "kmip-tls-test-server");
        final AtomicLong answered = new AtomicLong();
        final List<String> protocols = new CopyOnWriteArrayList<>();
        final List<String> sni = new CopyOnWriteArrayList<>();

        Server(SSLServerSocket socket) {
            this.socket = socket;
            thread.setDaemon(true);
        }

        int port() {
            return socket.getLocalPort();
        }

        private void serve() {
            while (!socket.isClosed()) {
                try {
                    SSLSocket c = (SSLSocket) socket.accept();
                    Thread t = new Thread(() -> answer(c), "kmip-tls-test-connection");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    // closed
                }
            }
        }

        /** One connection: the handshake, then one Locate answered. */
        private void answer(SSLSocket connection) {
            try (SSLSocket c = connection) {
                c.setSoTimeout(5000);
                c.startHandshake();
                protocols.add(c.getSession().getProtocol());
                for (SNIServerName n : ((ExtendedSSLSession) c.getSession()).getRequestedServerNames()) {
                    sni.add(((SNIHostName) n).getAsciiName());
                }
                DataInputStream in = new DataInputStream(c.getInputStream());
                byte[] header = new byte[8];
                in.readFully(header);
                int length = ((header[4] & 0xff) << 24) | ((header[5] & 0xff) << 16) | ((header[6] & 0xff) << 8)
                        | (header[7] & 0xff);
                in.readFully(new byte[length]);
                OutputStream out = c.getOutputStream();
                out.write(locateResponse("k1"));
                out.flush();
                answered.incrementAndGet();
            } catch (IOException e) {
                // a refused handshake, or the client went away: the client's side is what is tested
            }
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    static byte[] locateResponse(String uid) {
        return Ttlv.structure(Tag.RESPONSE_MESSAGE,
                Ttlv.structure(Tag.RESPONSE_HEADER,
                        Ttlv.structure(Tag.PROTOCOL_VERSION,
                                Ttlv.integer(Tag.PROTOCOL_VERSION_MAJOR, 1), Ttlv.integer(Tag.PROTOCOL_VERSION_MINOR, 2)),
                        Ttlv.dateTime(Tag.TIME_STAMP, System.currentTimeMillis() / 1000),
                        Ttlv.integer(Tag.BATCH_COUNT, 1)),
                Ttlv.structure(Tag.BATCH_ITEM,
                        Ttlv.enumeration(Tag.OPERATION, KmipEnum.OP_LOCATE),
                        Ttlv.enumeration(Tag.RESULT_STATUS, KmipEnum.RESULT_SUCCESS),
                        Ttlv.structure(Tag.RESPONSE_PAYLOAD, Ttlv.text(Tag.UNIQUE_IDENTIFIER, uid)))).encode();
    }

    // --- certificates -------------------------------------------------------------------------------

    private static KeyPair ecKeys() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static GeneralName dns(String name) {
        return new GeneralName(GeneralName.dNSName, name);
    }

    private static Issuer newCa(String cn) throws Exception {
        KeyPair keys = ecKeys();
        X500Name name = new X500Name("CN=" + cn);
        X509v3CertificateBuilder b = builder(name, name, keys)
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        return new Issuer(keys, sign(b, keys));
    }

    /** A server certificate (serverAuth, with these SANs) or a client certificate (clientAuth). */
    private static Leaf leaf(Issuer issuer, String cn, GeneralNames sans, boolean client) throws Exception {
        KeyPair keys = ecKeys();
        X509v3CertificateBuilder b = builder(new X500Name("CN=" + cn),
                new X500Name(issuer.cert().getSubjectX500Principal().getName()), keys)
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                .addExtension(Extension.extendedKeyUsage, false,
                        new ExtendedKeyUsage(client ? KeyPurposeId.id_kp_clientAuth : KeyPurposeId.id_kp_serverAuth));
        if (sans != null) {
            b.addExtension(Extension.subjectAlternativeName, false, sans);
        }
        return new Leaf(keys, sign(b, issuer.keys()));
    }

    private static X509v3CertificateBuilder builder(X500Name subject, X500Name issuer, KeyPair keys) {
        long now = System.currentTimeMillis();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIAL.getAndIncrement()),
                new Date(now - 3_600_000L), new Date(now + 86_400_000L), subject, keys.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }

    private static void writePem(Path file, String type, byte[] der) throws IOException {
        Files.writeString(file, "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n", StandardCharsets.US_ASCII);
    }
}
