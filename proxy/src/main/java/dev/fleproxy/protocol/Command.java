package dev.fleproxy.protocol;

/**
 * A request as the admission gate admitted it, once, before any filter that decides by it: the
 * command's name, its row in the {@link CommandTable} (null for a command the table does not know,
 * admitted only where nothing is encrypted), the database it is sent to, and the encrypted
 * collection it works on, all read with one policy (the request carries that policy: every filter
 * decides by the same one, whatever a reload does meanwhile). A request that reaches the encrypting
 * filters without one was not admitted, and is refused there.
 *
 * @param name the body's first key (the handshake's own spelling for a legacy hello)
 * @param spec its row, or null
 * @param database the {@code $db} it is sent to, checked as MongoDB checks database names
 * @param named the name its own element (getMore: its {@code collection}) gives, if a string: a
 *        collection, or an admin command's "db.coll"; null otherwise
 * @param target the namespace of the encrypted collection it works on ("db.coll"), or null: the
 *        collection its own element or getMore's {@code collection} names, an admin command's
 *        "db.coll", bulkWrite's first encrypted nsInfo entry, or a database command whose element
 *        happens to name one (its target cannot be shown to be plain)
 * @param legacyHandshake whether it came as OP_QUERY (only the handshake may)
 */
public record Command(String name, CommandSpec spec, String database, String named, String target,
                      boolean legacyHandshake) {
}
