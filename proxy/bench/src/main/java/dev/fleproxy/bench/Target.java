package dev.fleproxy.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where one series of phases runs, and whose CPU it is charged to.
 *
 * @param name       the label in the report (unique)
 * @param kind       what sits between the client and the backend
 * @param uri        connection string the client uses
 * @param collection collection of database {@code bench}
 * @param pid        the process whose CPU (and allocation) is measured, 0 for none
 * @param transport  nio, epoll or io_uring: relays, plain proxies and encrypted targets are
 *                   compared with the ones on the same transport; null for direct
 * @param suite      the cipher suite of an encrypted collection (AES_GCM, …), null otherwise
 * @param alloc      which phases the allocation probe records; null when not said
 * @param tls        the client connects over TLS; such targets are reported beside their
 *                   plaintext twins ("TLS on the client side") and never take part in the checks
 * @param metrics    the proxy runs with its admin listener on and scraped (issue 15); such targets
 *                   are judged only against their twin without it (rule 5), never a baseline
 */
public record Target(String name, Kind kind, String uri, String collection, long pid, String transport, String suite,
                     Alloc alloc, boolean tls, boolean metrics) {

    public enum Kind {
        DIRECT("direct"), RELAY("relay"), PROXY_PLAIN("proxy-plain"), ENCRYPTED("encrypted");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }

        static Kind of(String s) {
            for (Kind k : values()) {
                if (k.label.equals(s)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("kind must be direct, relay, proxy-plain or encrypted, not '" + s + "'");
        }
    }

    /** Phases the allocation probe records on a target. */
    public enum Alloc {
        NONE, INSERT, READ, BOTH;

        boolean insert() {
            return this == INSERT || this == BOTH;
        }

        boolean read() {
            return this == READ || this == BOTH;
        }
    }

    public static final List<String> TRANSPORTS = List.of("nio", "epoll", "io_uring");
    /** The proxy's cipher suites (crypto.CipherSuite), as results/crypto/results.csv names them. */
    public static final List<String> SUITES = List.of("AES_GCM", "ARIA_GCM", "LEA_GCM", "AES_CBC_HMAC", "ARIA_CBC_HMAC",
            "SEED_CBC_HMAC", "TDES_CBC_HMAC");
    static final List<String> KEYS = List.of("kind", "uri", "collection", "pid", "transport", "suite", "name", "alloc",
            "tls", "metrics");
    /** Commas start a new pair only before WORD=, so a URI may list several hosts (a:1,b:2). */
    private static final Pattern SPLIT = Pattern.compile(",(?=[A-Za-z_-]+=)");
    /** The URI's own tls= or ssl= option, if it has one. */
    private static final Pattern URI_TLS = Pattern.compile("[?&](?:tls|ssl)=(true|false)(?:&|$)", Pattern.CASE_INSENSITIVE);

    public boolean measured() {
        return pid > 0;
    }

    /**
     * The twin rule 5 compares a target with metrics to: the first target of the same kind,
     * transport and suite without metrics (neither over TLS); null for a target without metrics
     * or when there is none.
     */
    public static Target twinOf(List<Target> targets, Target m) {
        if (!m.metrics() || m.tls()) {
            return null;
        }
        return targets.stream().filter(t -> !t.metrics() && !t.tls() && t.kind() == m.kind()
                && java.util.Objects.equals(t.transport(), m.transport())
                && java.util.Objects.equals(t.suite(), m.suite())).findFirst().orElse(null);
    }

    /**
     * Parses {@code kind=K,uri=U[,collection=C][,pid=N][,transport=T][,suite=S][,name=L][,alloc=A][,tls=B][,metrics=B]};
     * throws IllegalArgumentException naming what is wrong.
     */
    public static Target parse(String spec) {
        Map<String, String> kv = new LinkedHashMap<>();
        for (String part : SPLIT.split(spec.trim(), -1)) {
            int eq = part.indexOf('=');
            String key = eq < 0 ? part : part.substring(0, eq);
            if (eq < 0 || !KEYS.contains(key)) {
                throw new IllegalArgumentException("'" + part + "' is not one of " + String.join("=, ", KEYS) + "=");
            }
            if (kv.put(key, part.substring(eq + 1).trim()) != null) {
                throw new IllegalArgumentException(key + "= given twice");
            }
        }
        if (!kv.containsKey("kind")) {
            throw new IllegalArgumentException("kind= is missing (direct, relay, proxy-plain or encrypted)");
        }
        Kind kind = Kind.of(kv.get("kind"));
        String uri = kv.get("uri");
        if (uri == null || !(uri.startsWith("mongodb://") || uri.startsWith("mongodb+srv://"))) {
            throw new IllegalArgumentException("uri= must be a connection string (mongodb://HOST:PORT)");
        }
        String transport = kv.get("transport");
        if (transport != null) {
            transport = transport.toLowerCase(Locale.ROOT);
            if (!TRANSPORTS.contains(transport)) {
                throw new IllegalArgumentException("transport must be nio, epoll or io_uring, not '" + transport + "'");
            }
        } else if (kind != Kind.DIRECT) {
            throw new IllegalArgumentException("transport= is missing (nio, epoll or io_uring): " + kind.label()
                    + " targets are compared with those on the same transport");
        }
        String suite = kv.get("suite");
        if (kind == Kind.ENCRYPTED) {
            if (suite == null) {
                throw new IllegalArgumentException("suite= is missing for an encrypted target (one of " + SUITES + ")");
            }
            suite = suite.toUpperCase(Locale.ROOT).replace('-', '_');
            if (!SUITES.contains(suite)) {
                throw new IllegalArgumentException("unknown suite '" + kv.get("suite") + "' (one of " + SUITES + ")");
            }
        } else if (suite != null) {
            throw new IllegalArgumentException("suite= is for encrypted targets only");
        }
        String collection = kv.get("collection");
        if (collection == null) {
            if (kind == Kind.ENCRYPTED) {
                throw new IllegalArgumentException("collection= is missing: the encrypted collection of database bench");
            }
            collection = "plain";
        }
        if (collection.isEmpty() || collection.contains("$")) {
            throw new IllegalArgumentException("collection '" + collection + "' is not a collection name");
        }
        long pid = 0;
        if (kv.containsKey("pid")) {
            try {
                pid = Long.parseLong(kv.get("pid"));
            } catch (NumberFormatException e) {
                pid = -1;
            }
            if (pid <= 0) {
                throw new IllegalArgumentException("pid= must be a process id, not '" + kv.get("pid") + "'");
            }
        }
        Alloc alloc = null;
        if (kv.containsKey("alloc")) {
            try {
                alloc = Alloc.valueOf(kv.get("alloc").toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("alloc must be none, insert, read or both, not '" + kv.get("alloc") + "'");
            }
        }
        boolean tls = flag(kv, "tls");
        boolean metrics = flag(kv, "metrics");
        Matcher m = URI_TLS.matcher(uri);
        if (m.find() && Boolean.parseBoolean(m.group(1).toLowerCase(Locale.ROOT)) != tls) {
            throw new IllegalArgumentException(tls ? "tls=true, but the uri says tls=false"
                    : "the uri asks for TLS: say tls=true too (TLS targets are reported apart from the others)");
        }
        String name = kv.get("name");
        if (name == null || name.isBlank()) {
            name = switch (kind) {
                case DIRECT -> "direct";
                case RELAY -> "relay " + transport;
                case PROXY_PLAIN -> "proxy " + transport + ", no policy";
                case ENCRYPTED -> suite + " " + transport;
            } + (tls ? ", TLS" : "") + (metrics ? ", metrics" : "");
        }
        return new Target(name.trim(), kind, uri, collection, pid, transport, suite, alloc, tls, metrics);
    }

    private static boolean flag(Map<String, String> kv, String key) {
        if (!kv.containsKey(key)) {
            return false;
        }
        String b = kv.get(key).toLowerCase(Locale.ROOT);
        if (!b.equals("true") && !b.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, not '" + kv.get(key) + "'");
        }
        return b.equals("true");
    }
}
