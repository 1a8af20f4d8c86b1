package dev.fleproxy.kmip;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * A small KMIP client over TLS (1.3 or 1.2, {@link KmipTls#PROTOCOLS}) with mutual authentication;
 * the KMS's certificate must name the host connected to, or the configured server name. It is safe
 * for several threads: up to {@code maxConnections} requests run at once, each on a connection of
 * its own, and idle connections are kept for the next request. Calls block, so they run on the key
 * resolver's threads, never on an event loop (a call from one is refused: it would stall every
 * connection of that loop). A reused connection that turns out broken (the KMS closed it
 * meanwhile) is replaced once; a timeout is not retried, since a KMS that hangs would only make the
 * caller wait twice.
 */
public final class KmipClient implements AutoCloseable {
    /** Largest response accepted; key responses are a few hundred bytes. */
    private static final int MAX_RESPONSE = 1 << 20;
    /** TLS alerts (RFC 8446 §6.2) a server sends when it will not take the client's certificate. */
    private static final List<String> CLIENT_CERTIFICATE_ALERTS = List.of("bad_certificate",
            "unsupported_certificate", "certificate_revoked", "certificate_expired", "certificate_unknown",
            "unknown_ca", "access_denied", "certificate_required");

    private final String host;
    private final int port;
    /** The name the KMS's certificate must carry (and the SNI, for a DNS name). */
    private final String serverName;
    private final SSLContext tls;
    private final int connectTimeoutMs;
    private final int readTimeoutMs;
    private final KmipMessages.Version version;
    private final Semaphore permits;
    private final ConcurrentLinkedDeque<SSLSocket> idle = new ConcurrentLinkedDeque<>();
    private final AtomicLong roundTrips = new AtomicLong();
    private volatile boolean closed;

    /**
     * Where the KMS listens. {@code serverName} is the name its certificate must carry instead of
     * {@code host} (an IP address SAN for an IP address, a DNS SAN for a name, which is also sent as
     * SNI); null for {@code host}.
     */
    public record Endpoint(String host, int port, String serverName) {
    }

    public KmipClient(Endpoint kms, SSLContext tls, int connectTimeoutMs, int readTimeoutMs, int maxConnections,
                      KmipMessages.Version version) {
        this.host = kms.host();
        this.port = kms.port();
        this.serverName = kms.serverName() == null ? kms.host() : kms.serverName();
        this.tls = tls;
        this.connectTimeoutMs = connectTimeoutMs;
        this.readTimeoutMs = readTimeoutMs;
        this.permits = new Semaphore(Math.max(1, maxConnections));
        this.version = version;
    }


    /** Requests sent to the KMS so far (each one a network round trip). */
    public long roundTrips() {
        return roundTrips.get();
    }

    public String address() {
        return host + ":" + port;
    }

    public List<String> locateByName(String name, Integer state) {
        return KmipMessages.locatedIds(send(KmipMessages.locateByName(version, name, state)));
    }

    public KmipMessages.KeyBlock get(String uid) {
        return KmipMessages.symmetricKey(send(KmipMessages.get(version, uid)));
    }

    public Map<String, List<Ttlv>> getAttributes(String uid, String... names) {
        return KmipMessages.attributes(send(KmipMessages.getAttributes(version, uid, names)));
    }

    /** Sends one request on a connection of its own and reads its response. */
    Ttlv send(Ttlv request) {
        if (Thread.currentThread() instanceof FastThreadLocalThread) { // Netty's event loop threads
            throw new IllegalStateException("a KMS request on event loop thread " + Thread.currentThread().getName()
                    + ": key fetches must run on the key resolver's threads");
        }
        byte[] bytes = request.encode();
        try {
            permits.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KmipException("interrupted while waiting for a connection to the KMS at " + address(), e);
        }
        try {
            return exchange(bytes);
        } finally {
            permits.release();
        }
    }

    private Ttlv exchange(byte[] bytes) {
        SSLSocket reused = idle.pollFirst();
        if (reused != null) {
            try {
                return roundTrip(reused, bytes);
            } catch (SocketTimeoutException e) {
                closeQuietly(reused);
                throw unreachable(e, false);
            } catch (IOException stale) {
                closeQuietly(reused); // closed by the KMS while idle: one fresh connection
            }
        }
        Socket raw = new Socket();
        try {
            raw.connect(new InetSocketAddress(host, port), connectTimeoutMs);
            raw.setSoTimeout(readTimeoutMs);
        } catch (IOException e) {
            closeQuietly(raw);
            throw unreachable(e, false);
        }
        SSLSocket fresh;
        try {
            // the peer host given here is the name endpoint identification checks
            fresh = (SSLSocket) tls.getSocketFactory().createSocket(raw, serverName, port, true);
            KmipTls.configure(fresh, serverName);
            fresh.startHandshake();
        } catch (IOException e) {
            closeQuietly(raw);
            throw unreachable(e, true);
        }
        try {
            return roundTrip(fresh, bytes);
        } catch (IOException e) {
            closeQuietly(fresh);
            throw unreachable(e, !(e instanceof SocketTimeoutException));
        }
    }

    private Ttlv roundTrip(SSLSocket socket, byte[] bytes) throws IOException {
        roundTrips.incrementAndGet();
        OutputStream out = socket.getOutputStream();
        out.write(bytes);
        out.flush();
        Ttlv response = Ttlv.decode(readMessage(new DataInputStream(socket.getInputStream())));
        if (closed) {
            closeQuietly(socket);
        } else {
            idle.offerFirst(socket);
        }
        return response;
    }

    /**
     * Why the KMS could not be used, in words an operator can act on.
     *
     * @param connected the TCP connection was up (the TLS handshake or the first exchange failed)
     */
    private KmipException unreachable(IOException e, boolean connected) {
        if (e instanceof javax.net.ssl.SSLException) {
            return new KmipException("TLS with the KMS at " + address() + " failed (" + tlsAdvice(e) + "): "
                    + describe(e), e);
        }
        if (connected && !(e instanceof SocketTimeoutException)) {
            return new KmipException("the KMS at " + address() + " closed the connection right after the TLS "
                    + "handshake, before answering: it most likely rejected this client's certificate (it must be signed "
                    + "by the KMS's CA and carry extendedKeyUsage clientAuth): " + describe(e), e);
        }
        if (e instanceof SocketTimeoutException) {
            return new KmipException("KMS " + address() + " did not answer within " + readTimeoutMs + " ms", e);
        }
        return new KmipException("KMS " + address() + " unreachable: " + describe(e), e);
    }

    /** What to check after a failed handshake, from the certificate problem behind it if any. */
    private String tlsAdvice(IOException e) {
        String refusal = clientCertificateRefusal(e);
        if (refusal != null) {
            return "the KMS rejected this client's certificate (" + refusal + "): it must be signed by the "
                    + "KMS's CA and carry extendedKeyUsage clientAuth";
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.security.cert.CertificateException) {
                String m = String.valueOf(t.getMessage());
                if (m.contains("subject alternative") || m.contains("No name matching")) {
                    return "host name mismatch: the KMS's certificate does not name " + serverName
                            + (serverName.equals(host) ? " (kmip.host; set kmip.serverName if it carries another name)"
                                    : " (kmip.serverName)");
                }
                if (m.contains("PKIX path") || t instanceof java.security.cert.CertificateExpiredException
                        || t instanceof java.security.cert.CertificateNotYetValidException) {
                    return "the KMS's certificate is not trusted: is it signed by the CA in kmip.ca, and valid now?";
                }
            }
        }
        return "check the CA and the client certificate and key";
    }

    /**
     * The alert by which the KMS refused this client's certificate during the handshake, null if
     * the failure is something else. With TLS 1.3 the server checks the client's certificate after
     * the client has finished its side, so the same refusal may instead close the connection
     * right after the handshake (unreachable's second case, which says the same).
     */
    static String clientCertificateRefusal(IOException e) {
        String m = String.valueOf(e.getMessage());
        for (String alert : CLIENT_CERTIFICATE_ALERTS) {
            if (m.contains("Received fatal alert: " + alert)) {
                return alert;
            }
        }
        return null;
    }

    private static String describe(IOException e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    private static byte[] readMessage(DataInputStream in) throws IOException {
        byte[] header = new byte[8];
        in.readFully(header);
        int length = ((header[4] & 0xff) << 24) | ((header[5] & 0xff) << 16) | ((header[6] & 0xff) << 8)
                | (header[7] & 0xff);
        if (length < 0 || length > MAX_RESPONSE) {
            throw new IOException("KMIP response declares " + length + " bytes");
        }
        byte[] whole = new byte[8 + length];
        System.arraycopy(header, 0, whole, 0, 8);
        in.readFully(whole, 8, length);
        return whole;
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already broken
        }
    }

    @Override
    public void close() {
        closed = true;
        for (SSLSocket s; (s = idle.pollFirst()) != null; ) {
            closeQuietly(s);
        }
    }
}
