package dev.fleproxy.server;

import dev.fleproxy.policy.Identities;
import dev.fleproxy.policy.PeerFacts;
import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;

/**
 * What the proxy has verified about one client connection ({@link PeerFacts}): its TLS client
 * certificate, read once after the handshake, and the MongoDB user the server confirmed a SCRAM
 * conversation for ({@link AuthenticationWatch}). Its identity under a policy's {@code identities:}
 * is worked out once per policy and user. Used on the connection's event loop only.
 */
public final class Peer {
    /** A message made outside a session (tests, benchmarks): nothing verified, anonymous. */
    public static final Peer NONE = new Peer(() -> PeerFacts.NONE, 0, "(none)");

    private final Supplier<PeerFacts> certificate;
    private final long connection;
    private final String address;
    private PeerFacts facts;
    private String user;
    private Identities resolvedFor;
    /** The SCRAM conversation under way on this connection, if any (AuthenticationWatch's). */
    private Object conversation;
    private String identity;
    private dev.fleproxy.audit.AuditMemo auditMemo;
    /** What to let go when the connection closes, by who asked (each asks once). */
    private java.util.Map<Object, Runnable> onClose;
    private boolean closed;

    Peer(Supplier<PeerFacts> certificate, long connection, String address) {
        this.certificate = certificate;
        this.connection = connection;
        this.address = address;
    }

    /** The peer of a client connection: its certificate as the TLS handshake verified it, if any. */
    static Peer of(Channel client, long connection) {
        return new Peer(() -> certificateFacts(client), connection, String.valueOf(client.remoteAddress()));
    }

    /**
     * Runs {@code release} when the connection closes, once per {@code owner} however often it
     * asks: what the proxy holds for this connection alone (the cursors of its queries outside a
     * session) goes with it.
     */
    public void whenClosed(Object owner, Runnable release) {
        if (this == NONE) {
            return; // no connection: nothing closes
        }
        if (closed) {
            release.run(); // asked after the close (a step that ran off the loop meanwhile): let go now
            return;
        }
        if (onClose == null) {
            onClose = new java.util.LinkedHashMap<>(2);
        }
        onClose.putIfAbsent(owner, release);
    }

    /** No longer to be let go at the close: {@code owner} let go of it itself. */
    public void forget(Object owner) {
        if (onClose != null) {
            onClose.remove(owner);
        }
    }

    /** The connection closed: what was held for it is let go. */
    void closed() {
        closed = true;
        java.util.Map<Object, Runnable> release = onClose;
        onClose = null;
        if (release != null) {
            release.values().forEach(Runnable::run);
        }
    }

    /** The connection's number, as its log lines name it (conn#N). */
    public long connection() {
        return connection;
    }

    /** The client's address as the connection saw it. */
    public String address() {
        return address;
    }

    public PeerFacts facts() {
        if (facts == null) {
            facts = certificate.get().withUser(user);
        }
        return facts;
    }

    /** The connection's identity under these identities (one of their names, or anonymous). */
    public String identity(Identities identities) {
        if (identities != resolvedFor) {
            identity = identities.of(facts());
            resolvedFor = identities;
        }
        return identity;
    }

    /** What this connection's audit lines repeat, encoded once (made on first use). */
    public dev.fleproxy.audit.AuditMemo auditMemo() {
        if (auditMemo == null) {
            auditMemo = new dev.fleproxy.audit.AuditMemo();
        }
        return auditMemo;
    }

    /** The server confirmed this user's authentication ("name@db"); null: a failed attempt, or logout. */
    void authenticated(String confirmed) {
        user = confirmed;
        facts = null;
        resolvedFor = null;
    }

    String user() {
        return user;
    }

    void converse(Object c) {
        conversation = c;
    }

    Object conversation() {
        return conversation;
    }

    private static PeerFacts certificateFacts(Channel client) {
        SslHandler tls = client.pipeline().get(SslHandler.class);
        if (tls == null) {
            return PeerFacts.NONE;
        }
        Certificate[] chain;
        try {
            chain = tls.engine().getSession().getPeerCertificates();
        } catch (SSLPeerUnverifiedException none) {
            return PeerFacts.NONE; // clientAuth none or optional, and the client presented none
        }
        if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
            return PeerFacts.NONE;
        }
        Set<String> dns = new HashSet<>();
        Set<String> uris = new HashSet<>();
        try {
            if (leaf.getSubjectAlternativeNames() != null) {
                for (List<?> san : leaf.getSubjectAlternativeNames()) {
                    if (san.size() == 2 && san.get(1) instanceof String value) {
                        if (Integer.valueOf(2).equals(san.get(0))) {
                            dns.add(value);
                        } else if (Integer.valueOf(6).equals(san.get(0))) {
                            uris.add(value);
                        }
                    }
                }
            }
        } catch (CertificateParsingException unreadable) {
            // no names from it; the subject still counts
        }
        return new PeerFacts(leaf.getSubjectX500Principal().getName(X500Principal.RFC2253), dns, uris, null);
    }
}
