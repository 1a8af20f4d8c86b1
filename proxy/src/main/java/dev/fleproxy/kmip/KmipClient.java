package dev.fleproxy.kmip;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * A small KMIP client over TLS 1.2 with mutual authentication: one connection, reused, one
 * request at a time (key resolution is rare: it runs at start-up and on cache refresh, never per
 * field). A broken connection is reopened once per request; all operations here are reads, so a
 * retry is safe.
 */
public final class KmipClient implements AutoCloseable {
    /** Largest response accepted; key responses are a few hundred bytes. */
    private static final int MAX_RESPONSE = 1 << 20;

    private final String host;
    private final int port;
    private final SSLContext tls;
    private final int connectTimeoutMs;
    private final int readTimeoutMs;
    private final KmipMessages.Version version;
    private final AtomicLong roundTrips = new AtomicLong();
    private SSLSocket socket;

    public KmipClient(String host, int port, SSLContext tls, int connectTimeoutMs, int readTimeoutMs,
                      KmipMessages.Version version) {
        this.host = host;
        this.port = port;
        this.tls = tls;
        this.connectTimeoutMs = connectTimeoutMs;
        this.readTimeoutMs = readTimeoutMs;
        this.version = version;
    }

    /** Requests sent to the KMS so far (each one a network round trip). */
    public long roundTrips() {
        return roundTrips.get();
    }

    public String address() {
        return host + ":" + port;
    }

    public synchronized List<String> locateByName(String name, Integer state) {
        return KmipMessages.locatedIds(send(KmipMessages.locateByName(version, name, state)));
    }

    public synchronized KmipMessages.KeyBlock get(String uid) {
        return KmipMessages.symmetricKey(send(KmipMessages.get(version, uid)));
    }

    public synchronized Map<String, List<Ttlv>> getAttributes(String uid, String... names) {
        return KmipMessages.attributes(send(KmipMessages.getAttributes(version, uid, names)));
    }

    /** Sends one request and reads its response, reconnecting once if the connection broke. */
    synchronized Ttlv send(Ttlv request) {
        byte[] bytes = request.encode();
        IOException first = null;
        boolean freshConnection = false;
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                freshConnection = socket == null;
                if (freshConnection) {
                    socket = connect();
                }
                roundTrips.incrementAndGet();
                OutputStream out = socket.getOutputStream();
                out.write(bytes);
                out.flush();
                return Ttlv.decode(readMessage(new DataInputStream(socket.getInputStream())));
            } catch (IOException e) {
                closeQuietly();
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (freshConnection && !(first instanceof javax.net.ssl.SSLException)
                && !(first instanceof java.net.ConnectException) && !(first instanceof java.net.SocketTimeoutException)) {
            throw new KmipException("the KMS at " + address() + " closed the connection right after the TLS handshake, "
                    + "before answering: it most likely rejected this client's certificate (it must be signed by the "
                    + "KMS's CA and carry extendedKeyUsage clientAuth): " + describe(first), first);
        }
        if (first instanceof javax.net.ssl.SSLException) {
            throw new KmipException("TLS with the KMS at " + address() + " failed (check the CA and the client "
                    + "certificate and key): " + describe(first), first);
        }
        throw new KmipException("KMS " + address() + " unreachable: " + describe(first), first);
    }

    private static String describe(IOException e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    private SSLSocket connect() throws IOException {
        Socket raw = new Socket();
        try {
            raw.connect(new InetSocketAddress(host, port), connectTimeoutMs);
            raw.setSoTimeout(readTimeoutMs);
            SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(raw, host, port, true);
            s.setEnabledProtocols(new String[] {"TLSv1.2"});
            s.startHandshake();
            return s;
        } catch (IOException e) {
            raw.close();
            throw e;
        }
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

    private void closeQuietly() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already broken
            }
            socket = null;
        }
    }

    @Override
    public synchronized void close() {
        closeQuietly();
    }
}
