package dev.fleproxy.protocol;

import java.util.Map;

/**
 * What the proxy knows of one command: where its namespace is, what it may carry, and what happens
 * to it when that namespace is encrypted. Built only by {@link CommandTable}.
 *
 * @param name the canonical name (an alias such as {@code findandmodify} maps to its command's spec)
 * @param scope how the command names what it works on
 * @param onEncrypted what the proxy does with it when it works on an encrypted collection
 * @param rewriter which rewriter carries it out, for {@link OnEncrypted#REWRITE}; else null
 * @param args every argument it may carry there, generic arguments included, by name
 * @param labelled whether it has its own value of the metrics' {@code command} label
 * @param crossReferences whether its body can name other namespaces ($lookup, $out, views,
 *        renames, ...): checked for encrypted ones whatever its own namespace
 * @param self what its own element holds when that is more than a name or a single value
 *        (explain's command, a list of session ids); null: a collection's name or a single value
 * @param others how arguments its row does not list are examined on a database with encrypted
 *        collections (a server's parameters by name, currentOp's filter); null: refused
 */
public record CommandSpec(String name, Scope scope, OnEncrypted onEncrypted, Rewriter rewriter, Map<String, Arg> args,
                          boolean labelled, boolean crossReferences, Arg self, Arg others) {

    /** How a command names what it works on. */
    public enum Scope {
        /** Handshake, authentication, sessions: never about a collection; passes whatever the policy. */
        CONNECTION,
        /** The server or cluster as a whole (admin commands): names no collection. */
        SERVER,
        /** {@code $db} as a whole. */
        DATABASE,
        /** A collection of {@code $db}, named by the command's own element (a non-string: the database). */
        COLLECTION,
        /** getMore: the collection named by its {@code collection} argument. */
        CURSOR,
        /** A whole namespace, "db.collection", as the command's own element (admin commands). */
        NAMESPACE,
        /** bulkWrite: the namespaces listed in nsInfo. */
        NAMESPACES
    }

    /** What the proxy does with a command that works on an encrypted collection. */
    public enum OnEncrypted {
        /** Rewrites or checks it ({@link #rewriter}), after examining every argument. */
        REWRITE,
        /** Forwards it as it is, after examining every argument: it carries and returns no field values. */
        PASS,
        /** Refuses it (9720011): it would read or write values in ways the proxy cannot rewrite. */
        REFUSE
    }

    /** The rewriters of package {@code rewrite}, one per command it carries out on encrypted collections. */
    public enum Rewriter {
        INSERT(Reply.NOTHING), UPDATE(Reply.NOTHING), DELETE(Reply.NOTHING), FIND_AND_MODIFY(Reply.VALUE),
        FIND(Reply.CURSOR), COUNT(Reply.NOTHING), DISTINCT(Reply.VALUES), AGGREGATE(Reply.CURSOR),
        GET_MORE(Reply.CURSOR), KILL_CURSORS(Reply.NOTHING), CREATE_INDEXES(Reply.NOTHING),
        COLLECTION_OPTIONS(Reply.NOTHING), BULK_WRITE(Reply.NOTHING);

        private final Reply reply;

        Rewriter(Reply reply) {
            this.reply = reply;
        }

        /** What its reply holds of the collection's documents. */
        public Reply reply() {
            return reply;
        }
    }

    /** The shape of a reply, as far as the collection's documents are in it. */
    public enum Reply {
        /** No documents (counts, write results, per-operation results): nothing to decrypt. */
        NOTHING,
        /** A cursor: documents in firstBatch, later nextBatch of the getMores that follow. */
        CURSOR,
        /** One document, findAndModify's value. */
        VALUE,
        /** distinct's values, one field's. */
        VALUES
    }

    /** The argument with that name, or null if the command may not carry it. */
    public Arg arg(String argName) {
        return args.get(argName);
    }
}
