package dev.fleproxy.config;

/**
 * What a peer that has proved nothing can make the proxy hold (top-level keys):
 *
 * <pre>
 * clientReadTimeoutMs: 30000            # a message begun must be complete within this; 0 = no limit
 * maxIdleTimeMs: 0                      # idle between messages; 0 (default) = no limit (drivers pool connections)
 * maxConnections: 10000                 # client connections at once; more are answered with 9720002, then closed
 * maxBufferedMessageBytes: 536870912    # bytes of partial messages held for all clients together
 * maxEvaluationBytes: 536870912         # candidates and held answers of evaluated queries, all clients together
 * </pre>
 */
public record Limits(int clientReadTimeoutMs, int maxIdleTimeMs, int maxConnections, long maxBufferedMessageBytes,
                     long maxEvaluationBytes) {
    public static final Limits DEFAULT = new Limits(ConfigSchema.CLIENT_READ_TIMEOUT_MS.intDefault(),
            ConfigSchema.MAX_IDLE_TIME_MS.intDefault(), ConfigSchema.MAX_CONNECTIONS.intDefault(),
            ConfigSchema.MAX_BUFFERED_MESSAGE_BYTES.longDefault());

    /** With the default evaluation budget. */
    public Limits(int clientReadTimeoutMs, int maxIdleTimeMs, int maxConnections, long maxBufferedMessageBytes) {
        this(clientReadTimeoutMs, maxIdleTimeMs, maxConnections, maxBufferedMessageBytes,
                ConfigSchema.MAX_EVALUATION_BYTES.longDefault());
    }

    static Limits parse(YamlMap m) {
        int read = m.integer(ConfigSchema.CLIENT_READ_TIMEOUT_MS);
        int idle = m.integer(ConfigSchema.MAX_IDLE_TIME_MS);
        int conns = m.integer(ConfigSchema.MAX_CONNECTIONS);
        Object b = m.raw("maxBufferedMessageBytes");
        long bytes = DEFAULT.maxBufferedMessageBytes();
        if (b != null) {
            if (!(b instanceof Number n) || n.longValue() < ConfigSchema.MAX_BUFFERED_MESSAGE_BYTES.min() || b instanceof Double) {
                throw new ConfigException(m.where("maxBufferedMessageBytes") + " must be an integer of at least "
                        + "48000000 (one whole message), not " + b);
            }
            bytes = n.longValue();
        }
        return new Limits(read, idle, conns, bytes, m.longInteger(ConfigSchema.MAX_EVALUATION_BYTES));
    }
}
