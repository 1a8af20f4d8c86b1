package dev.fleproxy.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code upstream:} names (issue 30), in one of three forms:
 * <ul>
 * <li>{@code host:port}: one server (a mongos, a mongod, the embedded backend);</li>
 * <li>{@code host:port,host:port} or a YAML list of them: several mongos of one cluster, each
 * new client connection going to one that answers;</li>
 * <li>{@code mongodb://a:27017,b:27017/?replicaSet=rs0}: a replica set, monitored with hello,
 * each new client connection going to its current primary. Options: {@code replicaSet}
 * (required in this form unless one host is named), {@code heartbeatFrequencyMS} (how often
 * each member is asked, default 500) and {@code serverSelectionTimeoutMS} (how long a new
 * connection waits for a primary, default 10000). Anything else (credentials, other options)
 * is refused: clients authenticate through the proxy, and an option silently ignored would
 * mislead.</li>
 * </ul>
 */
public record UpstreamForm(List<HostPort> addresses, String replicaSet, int heartbeatMs, int selectionTimeoutMs) {
    public static final int DEFAULT_HEARTBEAT_MS = 500;
    public static final int DEFAULT_SELECTION_TIMEOUT_MS = 10_000;

    public UpstreamForm {
        addresses = List.copyOf(addresses);
    }

    /** One server, as the first form. */
    public static UpstreamForm single(HostPort address) {
        return new UpstreamForm(List.of(address), null, DEFAULT_HEARTBEAT_MS, DEFAULT_SELECTION_TIMEOUT_MS);
    }

    public boolean isReplicaSet() {
        return replicaSet != null;
    }

    /** The form as written back: for log lines, the driver's connection string and readiness. */
    public String describe() {
        String hosts = String.join(",", addresses.stream().map(HostPort::toString).toList());
        return isReplicaSet() ? "replica set " + replicaSet + " (" + hosts + ")"
                : addresses.size() > 1 ? "mongos " + hosts : hosts;
    }

    /** The hosts and options as a MongoDB connection string's, for the driver (rewrap, check). */
    public String connectionHosts() {
        return String.join(",", addresses.stream().map(HostPort::toString).toList());
    }

    public static UpstreamForm parse(Object raw, String where) {
        if (raw instanceof List<?> list) {
            if (list.isEmpty()) {
                throw new ConfigException(where + " lists no address");
            }
            List<HostPort> out = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                out.add(HostPort.parse(list.get(i) == null ? null : String.valueOf(list.get(i)), where + "[" + i + "]"));
            }
            return distinct(out, null, DEFAULT_HEARTBEAT_MS, DEFAULT_SELECTION_TIMEOUT_MS, where);
        }
        String text = raw == null ? null : String.valueOf(raw).trim();
        if (text != null && text.startsWith("mongodb://")) {
            return uri(text, where);
        }
        if (text != null && text.startsWith("mongodb+srv://")) {
            throw new ConfigException(where + ": mongodb+srv:// needs SRV and TXT lookups the proxy does not make; list the hosts "
                    + "(mongodb://a:27017,b:27017/?replicaSet=NAME)");
        }
        if (text != null && text.contains(",")) {
            List<HostPort> out = new ArrayList<>();
            for (String part : text.split(",")) {
                out.add(HostPort.parse(part, where));
            }
            return distinct(out, null, DEFAULT_HEARTBEAT_MS, DEFAULT_SELECTION_TIMEOUT_MS, where);
        }
        return single(HostPort.parse(text, where));
    }

    private static UpstreamForm uri(String text, String where) {
        String rest = text.substring("mongodb://".length());
        int slash = rest.indexOf('/');
        int question = rest.indexOf('?');
        int hostsEnd = slash >= 0 ? slash : question >= 0 ? question : rest.length();
        String hosts = rest.substring(0, hostsEnd);
        if (hosts.contains("@")) {
            throw new ConfigException(where + ": no credentials here: clients authenticate through the proxy with their own");
        }
        String path = slash >= 0 ? rest.substring(slash + 1, question > slash ? question : rest.length()) : "";
        if (!path.isEmpty()) {
            throw new ConfigException(where + ": a database (/" + path + ") means nothing here; write mongodb://HOSTS/?OPTIONS");
        }
        Map<String, String> options = new LinkedHashMap<>();
        if (question >= 0) {
            for (String pair : rest.substring(question + 1).split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new ConfigException(where + ": option '" + pair + "' is not NAME=VALUE");
                }
                options.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        String set = null;
        int heartbeat = DEFAULT_HEARTBEAT_MS;
        int selection = DEFAULT_SELECTION_TIMEOUT_MS;
        for (Map.Entry<String, String> o : options.entrySet()) {
            switch (o.getKey()) {
                case "replicaSet" -> set = o.getValue();
                case "heartbeatFrequencyMS" -> heartbeat = millis(o.getValue(), 100, where + ": heartbeatFrequencyMS");
                case "serverSelectionTimeoutMS" -> selection = millis(o.getValue(), 100,
                        where + ": serverSelectionTimeoutMS");
                default -> throw new ConfigException(where + ": option " + o.getKey() + " is not one the proxy reads "
                        + "(replicaSet, heartbeatFrequencyMS, serverSelectionTimeoutMS); TLS is upstreamTls:");
            }
        }
        if (set != null && set.isBlank()) {
            throw new ConfigException(where + ": replicaSet is empty");
        }
        List<HostPort> out = new ArrayList<>();
        for (String part : hosts.split(",")) {
            out.add(HostPort.parse(part, where));
        }
        if (set == null && out.size() > 1) {
            throw new ConfigException(where + ": several hosts in a mongodb:// string need ?replicaSet=NAME; several "
                    + "mongos are written host:port,host:port");
        }
        return distinct(out, set, heartbeat, selection, where);
    }

    private static int millis(String v, int min, String what) {
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= 3_600_000) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // below
        }
        throw new ConfigException(what + " must be an integer " + min + "-3600000, not " + v);
    }

    private static UpstreamForm distinct(List<HostPort> addresses, String set, int heartbeat, int selection, String where) {
        for (int i = 0; i < addresses.size(); i++) {
            if (addresses.subList(0, i).contains(addresses.get(i))) {
                throw new ConfigException(where + " lists " + addresses.get(i) + " twice");
            }
        }
        return new UpstreamForm(addresses, set, heartbeat, selection);
    }
}
