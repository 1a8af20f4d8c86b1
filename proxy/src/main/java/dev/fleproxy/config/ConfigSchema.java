package dev.fleproxy.config;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Every key of the configuration file, once: its type, default, bounds and what it does. The
 * parsers read their keys through these settings (name, default, bounds), each section accepts
 * exactly the keys listed under it, {@code fle-proxy proxy --help} prints {@link #helpLines}, and a
 * test holds {@code docs/configuration.md} to {@link #markdown}. A new key is added here first.
 */
public final class ConfigSchema {
    private ConfigSchema() {
    }

    /**
     * One key. {@code path} is dotted ("kmip.port"; "collections.*.key" for a key under any
     * namespace); {@code dflt} is null for a required key and "" for an optional one without a
     * default; {@code min}/{@code max} bound integers.
     */
    public record Setting(String path, String type, String dflt, long min, long max, String doc) {
        /** The key's own name, the last part of its path. */
        public String key() {
            return path.substring(path.lastIndexOf('.') + 1);
        }

        /** The section it belongs to ("" for the top level). */
        public String section() {
            int dot = path.lastIndexOf('.');
            return dot < 0 ? "" : path.substring(0, dot);
        }

        public boolean required() {
            return dflt == null;
        }

        /** The default as an integer (integer settings only). */
        public int intDefault() {
            return Integer.parseInt(dflt);
        }

        public long longDefault() {
            return Long.parseLong(dflt);
        }
    }

    private static final List<Setting> ALL = new ArrayList<>();

    private static Setting required(String path, String type, String doc) {
        return add(new Setting(path, type, null, 0, 0, doc));
    }

    private static Setting optional(String path, String type, String dflt, String doc) {
        return add(new Setting(path, type, dflt, 0, 0, doc));
    }

    private static Setting integer(String path, long dflt, long min, long max, String doc) {
        return add(new Setting(path, "integer", Long.toString(dflt), min, max, doc));
    }

    private static Setting add(Setting s) {
        ALL.add(s);
        return s;
    }

    private static final long INT_MAX = Integer.MAX_VALUE;

    public static final Setting LISTEN = required("listen", "HOST:PORT", "where drivers connect");
    public static final Setting UPSTREAM = required("upstream", "HOST:PORT | HOST:PORT,HOST:PORT,… | mongodb://HOSTS/?replicaSet=NAME",
            "mongos, mongod or the embedded backend; several mongos (each new client connection to one that answers); "
                    + "a replica set (to its primary, followed across elections); see docs/operations.md");
    public static final Setting UPSTREAM_CONNECT_TIMEOUT_MS = integer("upstreamConnectTimeoutMs", 5000, 1, INT_MAX,
            "how long to wait for the upstream, per client connection");
    public static final Setting TRANSPORT = optional("transport", "auto|epoll|io_uring|nio", "auto",
            "sockets: auto takes epoll where it loads, else nio");
    public static final Setting ADMIN = optional("admin", "HOST:PORT", "",
            "/metrics, /healthz, /readyz over HTTP; off unless set, never the data port");
    public static final Setting INSTANCE = optional("instance", "NAME", "HOSTNAME-PORT",
            "this proxy's name in its audit lines and fleproxy_instance_info (letters, digits, . _ -; up to 64); "
                    + "the default, the host's name and the listen port, holds across restarts on one host");
    public static final Setting ALLOW_PLAINTEXT_LISTEN = optional("allowPlaintextListen", "boolean", "false",
            "listen off loopback without tls: (only on a network you trust)");
    public static final Setting CLIENT_READ_TIMEOUT_MS = integer("clientReadTimeoutMs", 30_000, 0, INT_MAX,
            "a message begun must be complete within this; 0 = no limit");
    public static final Setting MAX_IDLE_TIME_MS = integer("maxIdleTimeMs", 0, 0, INT_MAX,
            "idle time allowed between messages; 0 = no limit (drivers pool connections)");
    public static final Setting MAX_CONNECTIONS = integer("maxConnections", 10_000, 1, INT_MAX,
            "client connections at once; more are answered with 9720002, then closed");
    public static final Setting MAX_BUFFERED_MESSAGE_BYTES = integer("maxBufferedMessageBytes", 512L * 1024 * 1024,
            48_000_000L, Long.MAX_VALUE, "bytes of partial messages held for all clients together (at least one whole message)");
    public static final Setting MAX_EVALUATION_BYTES = integer("maxEvaluationBytes", 512L * 1024 * 1024,
            16L * 1024 * 1024, Long.MAX_VALUE, "memory for the candidates and held answers of queries the proxy "
                    + "evaluates, all clients together (candidates count 3x their bytes: decoded); past it 9720013");
    public static final Setting ENVELOPE_SUBTYPE = optional("envelopeSubtype", "6|0", "6",
            "BSON binary subtype of stored envelopes (0 for the embedded backend); reloaded");

    public static final Setting KMIP = optional("kmip", "mapping", "", "the KMS (KMIP over mutual TLS) and the key cache");
    public static final Setting KMIP_HOST = required("kmip.host", "string", "the KMS's host");
    public static final Setting KMIP_PORT = integer("kmip.port", 5696, 1, 65535, "the KMS's port");
    public static final Setting KMIP_SERVER_NAME = optional("kmip.serverName", "string", "",
            "the name the KMS's certificate must carry instead of host (DNS name, sent as SNI, or IP address)");
    public static final Setting KMIP_CA = required("kmip.ca", "file", "the CA that signed the KMS's certificate (PEM)");
    public static final Setting KMIP_CLIENT_CERT = optional("kmip.clientCert", "file", "",
            "the proxy's certificate (PEM, clientAuth); with clientKey, or clientPkcs12 instead");
    public static final Setting KMIP_CLIENT_KEY = optional("kmip.clientKey", "file", "", "its unencrypted PKCS#8 key (PEM)");
    public static final Setting KMIP_CLIENT_PKCS12 = optional("kmip.clientPkcs12", "file", "",
            "the client identity as one PKCS#12 file instead");
    public static final Setting KMIP_CLIENT_PKCS12_PASSWORD = optional("kmip.clientPkcs12Password", "string", "",
            "its password");
    public static final Setting KMIP_CACHE_TTL_SECONDS = integer("kmip.cacheTtlSeconds", 300, 1, 86_400,
            "how long a fetched key is served before it is fetched again");
    public static final Setting KMIP_OUTAGE_WINDOW_SECONDS = integer("kmip.outageWindowSeconds", 900, 0, 604_800,
            "how long past its TTL a cached key serves while the KMS is down");
    public static final Setting KMIP_NEGATIVE_CACHE_SECONDS = integer("kmip.negativeCacheSeconds", 10, 0, 3600,
            "how long an unknown key, or a failed fetch, is remembered");
    public static final Setting KMIP_KMS_WAIT_MS = integer("kmip.kmsWaitMs", 5000, 1, 600_000,
            "how long a request waits for a key not in memory, then 9720020");
    public static final Setting KMIP_CONNECTIONS = integer("kmip.connections", 4, 1, 64,
            "KMIP connections (and fetches) at most at once");
    public static final Setting KMIP_CONNECT_TIMEOUT_MS = integer("kmip.connectTimeoutMs", 3000, 1, 600_000,
            "TCP and TLS connect to the KMS");
    public static final Setting KMIP_READ_TIMEOUT_MS = integer("kmip.readTimeoutMs", 10_000, 1, 600_000,
            "one KMIP answer");

    public static final Setting TLS = optional("tls", "mapping", "", "TLS for clients (needed off loopback)");
    public static final Setting TLS_CERT = required("tls.cert", "file", "the certificate chain, leaf first (PEM)");
    public static final Setting TLS_KEY = required("tls.key", "file", "its PKCS#8 key (PEM)");
    public static final Setting TLS_CLIENT_CA = optional("tls.clientCA", "file", "", "the CA of client certificates");
    public static final Setting TLS_CLIENT_AUTH = optional("tls.clientAuth", "none|optional|required", "none",
            "whether clients present a certificate (optional and required need clientCA)");

    public static final Setting UPSTREAM_TLS = optional("upstreamTls", "mapping", "", "TLS to the upstream");
    public static final Setting UPSTREAM_TLS_CA = required("upstreamTls.ca", "file", "the CA of the upstream's certificate");
    public static final Setting UPSTREAM_TLS_CERT = optional("upstreamTls.cert", "file", "",
            "a client certificate (x.509 authentication), with key");
    public static final Setting UPSTREAM_TLS_KEY = optional("upstreamTls.key", "file", "", "its PKCS#8 key (PEM)");
    public static final Setting UPSTREAM_TLS_SERVER_NAME = optional("upstreamTls.serverName", "string", "",
            "the name to verify instead of upstream's host");

    public static final Setting COLLECTIONS = optional("collections", "mapping", "",
            "namespace (db.collection) -> how it is encrypted; reloaded");
    public static final Setting COLLECTION_KEY = required("collections.*.key", "UUID", "the KMIP key it is encrypted under");
    public static final Setting COLLECTION_PREVIOUS_KEYS = optional("collections.*.previousKeys", "list of UUID", "",
            "keys it was encrypted under before: they open envelopes, never seal");
    public static final Setting COLLECTION_FIELDS = required("collections.*.fields", "\"*\"|mapping|list",
            "\"*\": every top-level field but _id; or paths, each {deterministic: true} for equality queries");
    public static final Setting COLLECTION_SUITE = optional("collections.*.suite", "suite name", "",
            "the cipher suite; default the key algorithm's (GCM; CBC-HMAC for 3DES and SEED)");
    public static final Setting COLLECTION_PLAINTEXT_READS = optional("collections.*.plaintextReads", "allow|deny", "deny",
            "allow returns values that are not envelopes as stored (migration only)");
    public static final Setting COLLECTION_ENVELOPE_SUBTYPE = optional("collections.*.envelopeSubtype", "6|0", "",
            "overrides the top-level envelopeSubtype for this collection");
    public static final Setting COLLECTION_MAX_SCAN_DOCUMENTS = integer("collections.*.maxScanDocuments", 10_000, 1,
            1_000_000, "documents one request may have the proxy decrypt and examine for what the server cannot "
                    + "evaluate (a range or sort on an encrypted field); past it the request is refused (9720012)");
    public static final Setting FIELD_DETERMINISTIC = optional("collections.*.fields.*.deterministic", "boolean", "false",
            "equal values encrypt equally, so equality queries work (and equality shows)");
    public static final Setting FIELD_REVEAL = optional("collections.*.fields.*.reveal", "list of identities", "",
            "who sees the plaintext; everyone else gets mask (absent: everyone sees it)");
    public static final Setting FIELD_MASK = optional("collections.*.fields.*.mask", "redact|partial|pseudonym|deny",
            "deny", "what identities not in reveal get: null, the last keep characters, a keyed HMAC, or a refusal (9720040)");
    public static final Setting FIELD_KEEP = integer("collections.*.fields.*.keep", 4, 0, 64,
            "partial: how many trailing characters stay");
    public static final Setting FIELD_DENY = optional("collections.*.fields.*.deny", "list of identities", "",
            "identities refused (9720040) where the others not in reveal get mask");
    public static final Setting FIELD_QUERY = optional("collections.*.fields.*.query", "list of identities", "",
            "who may use it in filters, sorts and stages the proxy evaluates (absent: reveal's list, or everyone)");
    public static final Setting FIELD_WRITE = optional("collections.*.fields.*.write", "list of identities", "",
            "who may insert or update it (absent: everyone; for a deterministic field, query's list)");
    public static final Setting FIELD_INDEX = optional("collections.*.fields.*.index", "mapping", "",
            "an opt-in search index on a top-level field: tags beside its envelope let the server find candidates "
                    + "(docs/query-model.md#range-indexes, #text-indexes; what the server learns is stated there)");
    public static final Setting FIELD_INDEX_RANGE = optional("collections.*.fields.*.index.range", "mapping", "",
            "a range index for numbers or dates: ranges, $in and equality on the field read only the documents whose "
                    + "tags cover them");
    public static final Setting FIELD_RANGE_TYPE = optional("collections.*.fields.*.index.range.type", "number|date",
            "number", "what the index places on its grid: numbers of any type, or dates (by their milliseconds)");
    public static final Setting FIELD_RANGE_MIN = required("collections.*.fields.*.index.range.min", "number|date",
            "the grid's lowest value (a date for type: date); below it a value is stored as 'other' and is a "
                    + "candidate of every range");
    public static final Setting FIELD_RANGE_MAX = required("collections.*.fields.*.index.range.max", "number|date",
            "the grid's highest value; above it, 'other' as below min");
    public static final Setting FIELD_RANGE_PRECISION = integer("collections.*.fields.*.index.range.precision", 0, 0, 18,
            "decimal digits the grid keeps: its step is 10^-precision; (max - min) * 10^precision must fit in 62 "
                    + "bits (type: date: 0, steps of one millisecond)");
    public static final Setting FIELD_RANGE_SPARSITY = integer("collections.*.fields.*.index.range.sparsity", 1, 1, 8,
            "tags are stored for every sparsity-th level of the tree (fewer tags per document, more per query)");
    public static final Setting FIELD_INDEX_PREFIX = optional("collections.*.fields.*.index.prefix", "mapping", "",
            "a prefix index for strings: a regex anchored at the start with a literal reads only the documents whose "
                    + "tags hold that start");
    public static final Setting FIELD_PREFIX_MIN_LENGTH = integer("collections.*.fields.*.index.prefix.minLength", 1, 1, 64,
            "the shortest prefix tagged, in code points: a shorter start reads the candidates as without the index");
    public static final Setting FIELD_PREFIX_MAX_LENGTH = integer("collections.*.fields.*.index.prefix.maxLength", 16, 1,
            256, "the longest prefix tagged: a longer start asks for its first maxLength code points");
    public static final Setting FIELD_PREFIX_CASE_FOLD = optional("collections.*.fields.*.index.prefix.caseFold",
            "boolean", "false", "tags made from the lower case of each code point's upper case: regexes with the i "
                    + "option (and an ASCII start) use the index too");
    public static final Setting FIELD_PREFIX_DIACRITIC_FOLD = optional("collections.*.fields.*.index.prefix.diacriticFold",
            "boolean", "false", "tags made with combining marks dropped (é as e): fewer distinct tags, more candidates");
    public static final Setting FIELD_INDEX_SUFFIX = optional("collections.*.fields.*.index.suffix", "mapping", "",
            "a suffix index for strings: a regex anchored at the end with a literal reads only the documents whose "
                    + "tags hold that end");
    public static final Setting FIELD_SUFFIX_MIN_LENGTH = integer("collections.*.fields.*.index.suffix.minLength", 1, 1, 64,
            "the shortest suffix tagged, in code points: a shorter end reads the candidates as without the index");
    public static final Setting FIELD_SUFFIX_MAX_LENGTH = integer("collections.*.fields.*.index.suffix.maxLength", 16, 1,
            256, "the longest suffix tagged: a longer end asks for its last maxLength code points");
    public static final Setting FIELD_SUFFIX_CASE_FOLD = optional("collections.*.fields.*.index.suffix.caseFold",
            "boolean", "false", "as prefix.caseFold, for the end");
    public static final Setting FIELD_SUFFIX_DIACRITIC_FOLD = optional("collections.*.fields.*.index.suffix.diacriticFold",
            "boolean", "false", "as prefix.diacriticFold");
    public static final Setting FIELD_INDEX_SUBSTRING = optional("collections.*.fields.*.index.substring", "mapping", "",
            "a substring index for strings: a regex with a literal run of gramLength or more code points anywhere "
                    + "reads only the documents whose tags hold all its n-grams");
    public static final Setting FIELD_SUBSTRING_GRAM_LENGTH = integer("collections.*.fields.*.index.substring.gramLength",
            3, 1, 16, "n, the length of the n-grams tagged, in code points: a query's literal runs must be as long");
    public static final Setting FIELD_SUBSTRING_MAX_LENGTH = integer("collections.*.fields.*.index.substring.maxLength",
            256, 1, 4096, "the longest string whose n-grams are tagged: a longer one is tagged 'other', a candidate "
                    + "of every substring query");
    public static final Setting FIELD_SUBSTRING_CASE_FOLD = optional("collections.*.fields.*.index.substring.caseFold",
            "boolean", "false", "as prefix.caseFold, for n-grams");
    public static final Setting FIELD_SUBSTRING_DIACRITIC_FOLD = optional(
            "collections.*.fields.*.index.substring.diacriticFold", "boolean", "false", "as prefix.diacriticFold");

    public static final Setting AUDIT = optional("audit", "mapping", "",
            "the audit trail: a line per request on an encrypted collection, chained by HMAC (docs/access.md)");
    public static final Setting AUDIT_FILE = required("audit.file", "file", "where lines go; rotated to FILE.000001, …");
    public static final Setting AUDIT_KEY = required("audit.key", "UUID", "the KMIP key the chain's MAC key is derived from");
    public static final Setting AUDIT_ROTATE_BYTES = add(new Setting("audit.rotateBytes", "integer", "104857600", 4096,
            Long.MAX_VALUE, "a new file past this size"));
    public static final Setting AUDIT_ROTATE_SECONDS = integer("audit.rotateSeconds", 86_400, 0, INT_MAX,
            "a new file past this age; 0 = by size only");
    public static final Setting AUDIT_QUEUE = integer("audit.queue", 10_000, 1, 1_000_000,
            "lines waiting for the writer at most");
    public static final Setting AUDIT_ON_FULL = optional("audit.onFull", "refuse|drop", "refuse",
            "when the queue is full: refuse requests (9720042) or drop lines (counted)");
    public static final Setting AUDIT_STDOUT = optional("audit.stdout", "boolean", "false", "every line on standard output too");
    public static final Setting AUDIT_FSYNC = optional("audit.fsync", "boolean", "false",
            "each batch of lines forced to the disk (fsync) before its answers go; else written to the page cache");
    public static final Setting AUDIT_SYSLOG = optional("audit.syslog", "HOST:PORT", "",
            "every line to syslog over UDP too (RFC 5424, facility log audit); the file stays the trail of record");

    public static final Setting IDENTITIES = optional("identities", "mapping", "",
            "name -> what a connection must have verified to be it (all attributes given); the first that "
                    + "matches, else anonymous; reloaded");
    public static final Setting IDENTITY_SUBJECT = optional("identities.*.subject", "distinguished name", "",
            "the client certificate's subject (tls.clientAuth optional or required), compared as a DN: attribute "
                    + "types ignoring case, values byte for byte");
    public static final Setting IDENTITY_SUBJECT_IGNORE_CASE = optional("identities.*.subjectIgnoreCase", "boolean",
            "false", "compare the subject's attribute values ignoring case too (CN=PAYMENTS is CN=payments)");
    public static final Setting IDENTITY_DNS = optional("identities.*.dns", "string", "",
            "a DNS name among the client certificate's subject alternative names");
    public static final Setting IDENTITY_URI = optional("identities.*.uri", "string", "",
            "a URI among the client certificate's subject alternative names (a SPIFFE id)");
    public static final Setting IDENTITY_USER = optional("identities.*.user", "name@db", "",
            "the MongoDB user the server confirmed a SCRAM conversation for on this connection");

    /** Every setting, in the order of the file's documentation. */
    public static List<Setting> all() {
        return List.copyOf(ALL);
    }

    /** The keys a section accepts ("" for the top level, "collections.*" for a collection). */
    public static Set<String> keysOf(String section) {
        Set<String> keys = new LinkedHashSet<>();
        for (Setting s : ALL) {
            if (s.section().equals(section)) {
                keys.add(s.key());
            }
        }
        return keys;
    }

    /** The --help footer: one line a key, indented by section. */
    public static String[] helpLines() {
        List<String> lines = new ArrayList<>(List.of("", "Config file (YAML); unknown keys are an error:"));
        for (Setting s : ALL) {
            String indent = "  ".repeat(1 + s.path().split("\\.").length - 1);
            String head = indent + s.key() + ": " + s.type();
            String tail = s.required() ? "(required) " : s.dflt().isEmpty() ? "" : "(default " + s.dflt() + ") ";
            lines.add(head);
            lines.add(indent + "    " + tail + s.doc());
        }
        lines.add("");
        lines.add("SIGHUP, or any change to the file, reloads collections:, identities: and envelopeSubtype:");
        lines.add("without dropping connections; a bad file keeps the previous policy and logs why.");
        return lines.toArray(new String[0]);
    }

    /** The reference table of docs/configuration.md. */
    public static String markdown() {
        StringBuilder b = new StringBuilder("| key | type | default | bounds | what it does |\n|---|---|---|---|---|\n");
        for (Setting s : ALL) {
            String dflt = s.required() ? "required" : s.dflt().isEmpty() ? "" : "`" + s.dflt() + "`";
            String bounds = s.type().equals("integer") ? s.min() + " – " + (s.max() == INT_MAX ? "2³¹−1"
                    : s.max() == Long.MAX_VALUE ? "2⁶³−1" : Long.toString(s.max())) : "";
            b.append("| `").append(s.path()).append("` | ").append(s.type().replace("|", "\\|")).append(" | ")
                    .append(dflt).append(" | ").append(bounds).append(" | ").append(s.doc().replace("|", "\\|"))
                    .append(" |\n");
        }
        return b.toString();
    }
}
