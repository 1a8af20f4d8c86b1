package dev.fleproxy.bench;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's trust for TLS targets, against a TLS server in this JVM whose certificate (for
 * 127.0.0.1) is issued by ca.pem. The certificates are made by `openssl` for this run (none is
 * committed), as the proxy's crypto tests use it too.
 */
class TlsTrustTest {
    @TempDir
    static Path pki;

    @BeforeAll
    static void certificates() throws Exception {
        for (String ca : new String[] {"ca", "other-ca"}) {
            openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", ca + ".key");
            openssl("req", "-x509", "-new", "-key", ca + ".key", "-subj", "/CN=" + ca, "-days", "2", "-out", ca + ".pem");
        }
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "server.key");
        openssl("req", "-new", "-key", "server.key", "-subj", "/CN=server", "-out", "server.csr");
        Files.writeString(pki.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                "-extfile", "san.ext", "-out", "server.pem");
    }

    private static void openssl(String... args) throws Exception {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "openssl";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Process p = new ProcessBuilder(cmd).directory(pki.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
        }
    }

    @Test
    void theGivenCaIsTrustedAndNoOther() throws Exception {
        try (SSLServerSocket server = server()) {
            Thread acceptor = new Thread(() -> {
                for (int i = 0; i < 2; i++) {
                    try (SSLSocket s = (SSLSocket) server.accept()) {
                        s.startHandshake();
                        s.getOutputStream().write(1);
                    } catch (Exception e) {
                        // the untrusted client's handshake fails here too
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            try (SSLSocket c = (SSLSocket) TlsTrust.trusting(resource("ca.pem")).getSocketFactory()
                    .createSocket("127.0.0.1", server.getLocalPort())) {
                c.startHandshake();
                assertTrue(c.getInputStream().read() == 1);
            }
            try (SSLSocket c = (SSLSocket) TlsTrust.trusting(resource("other-ca.pem")).getSocketFactory()
                    .createSocket("127.0.0.1", server.getLocalPort())) {
                assertThrows(SSLHandshakeException.class, c::startHandshake);
            }
        }
    }

    @Test
    void aFileWithoutCertificatesIsNamed(@TempDir Path dir) throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.pem"), "");
        Path key = resource("server.key");
        assertMessage("holds no certificate", empty);
        assertTrue(message(key).contains("server.key"), message(key));
        assertMessage("is missing", dir.resolve("nothing.pem"));
    }

    private static void assertMessage(String expected, Path file) {
        String m = message(file);
        assertTrue(m.contains(expected) && m.contains(file.getFileName().toString()), m);
    }

    private static String message(Path file) {
        return assertThrows(IllegalArgumentException.class, () -> TlsTrust.trusting(file)).getMessage();
    }

    private static Path resource(String name) {
        return pki.resolve(name);
    }

    private static SSLServerSocket server() throws Exception {
        Certificate cert;
        try (var in = Files.newInputStream(resource("server.pem"))) {
            cert = CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        String pem = Files.readString(resource("server.key")).replaceAll("-----[A-Z ]+-----|\\s", "");
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("server", key, new char[0], new Certificate[] {cert});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        SSLServerSocket s = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 2,
                InetAddress.getLoopbackAddress());
        s.setSoTimeout(20_000);
        return s;
    }
}
