package dev.fleproxy.protocol;

/**
 * A request as the admission gate admitted it, once, before any filter that decides by it: the
 * command's name, its row in the {@link CommandTable} (null for a command the table does not know,
 * admitted only where nothing is encrypted), and the database it is sent to. A request that reaches
 * the encrypting filters without one was not admitted, and is refused there.
 *
 * @param name the body's first key (the handshake's own spelling for a legacy hello)
 * @param spec its row, or null
 * @param database the {@code $db} it is sent to, checked as MongoDB checks database names
 * @param legacyHandshake whether it came as OP_QUERY (only the handshake may)
 */
public record Command(String name, CommandSpec spec, String database, boolean legacyHandshake) {
}
