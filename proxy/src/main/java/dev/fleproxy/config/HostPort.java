package dev.fleproxy.config;

/** A "host:port" pair as written in the config file ("[::1]:27017" for IPv6 literals). */
public record HostPort(String host, int port) {

    /**
     * True for a loopback host written literally (127.0.0.0/8, ::1, localhost): decided from the
     * text, without a DNS lookup, so a name that resolves elsewhere is never taken for loopback.
     */
    public static boolean isLoopback(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return h.equals("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1")
                || h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    }

    public static HostPort parse(String text, String what) {
        if (text == null || text.isBlank()) {
            throw new ConfigException(what + " is missing (expected HOST:PORT)");
        }
        String s = text.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new ConfigException(what + " '" + s + "' is not HOST:PORT");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException(what + " '" + s + "' has a non-numeric port");
        }
        if (port < 0 || port > 65535) {
            throw new ConfigException(what + " '" + s + "' has port " + port + " outside 0-65535");
        }
        return new HostPort(host, port);
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
