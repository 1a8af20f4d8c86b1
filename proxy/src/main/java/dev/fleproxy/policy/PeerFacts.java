package dev.fleproxy.policy;

import java.util.Set;

/**
 * What the proxy has verified about a client connection, and nothing it was merely told: the
 * subject and subject alternative names of the certificate the client presented in the TLS
 * handshake (checked against {@code tls.clientCA}), and the MongoDB user whose authentication
 * the server confirmed on this connection ("name@db"; null before, or after a failed attempt).
 *
 * @param subject the certificate's subject DN (RFC 2253), null without a certificate
 */
public record PeerFacts(String subject, Set<String> dnsNames, Set<String> uris, String user) {
    public static final PeerFacts NONE = new PeerFacts(null, Set.of(), Set.of(), null);

    public PeerFacts {
        dnsNames = Set.copyOf(dnsNames);
        uris = Set.copyOf(uris);
    }

    public PeerFacts withUser(String authenticated) {
        return new PeerFacts(subject, dnsNames, uris, authenticated);
    }
}
