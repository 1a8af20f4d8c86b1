package dev.fleproxy.kmip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;

/** The client's own rules, without a server. */
class KmipClientTest {

    @Test
    void aKmsRequestFromAnEventLoopThreadIsRefusedBeforeAnyIo() throws Exception {
        KmipClient client = new KmipClient(new KmipClient.Endpoint("127.0.0.1", 1, null), SSLContext.getDefault(), 1000, 1000, 1,
                KmipMessages.Version.V1_2);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread loop = new FastThreadLocalThread(() -> {
            try {
                client.locateByName("x", null);
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "a-netty-event-loop");
        loop.start();
        loop.join();
        assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
        assertTrue(thrown.get().getMessage().contains("event loop thread a-netty-event-loop"), thrown.get().getMessage());
        assertTrue(client.roundTrips() == 0, "nothing was sent");
    }

    @Test
    void aServersAlertAgainstTheClientsCertificateIsNamedAsSuch() {
        // what the JDK reports when the KMS's OpenSSL refuses a certificate not meant for clientAuth
        // before the client's side of the handshake is through (after it, the connection just closes)
        assertEquals("unsupported_certificate", KmipClient.clientCertificateRefusal(
                new javax.net.ssl.SSLHandshakeException("Received fatal alert: unsupported_certificate")));
        assertEquals("unknown_ca", KmipClient.clientCertificateRefusal(
                new javax.net.ssl.SSLHandshakeException("Received fatal alert: unknown_ca")));
        assertNull(KmipClient.clientCertificateRefusal(
                new javax.net.ssl.SSLHandshakeException("Received fatal alert: handshake_failure")));
        assertNull(KmipClient.clientCertificateRefusal(new javax.net.ssl.SSLHandshakeException(null)));
    }
}
