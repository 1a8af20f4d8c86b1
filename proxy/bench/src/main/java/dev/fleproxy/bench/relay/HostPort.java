package dev.fleproxy.bench.relay;

/** A "host:port" pair ("[::1]:27017" for IPv6 literals), as the proxy's config writes them. */
public record HostPort(String host, int port) {

    /** Parses HOST:PORT; throws IllegalArgumentException naming what is wrong. */
    public static HostPort parse(String text) {
        String s = text == null ? "" : text.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException("'" + s + "' is not HOST:PORT");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + s + "' has a non-numeric port");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("'" + s + "' has port " + port + " outside 0-65535");
        }
        return new HostPort(host, port);
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
