package dev.fleproxy.protocol;

/**
 * What an argument of a command holds, and so how the proxy examines it when the command is for
 * an encrypted collection. Every argument the proxy forwards there has one of these kinds in
 * {@link CommandTable}; an argument the table does not name is refused. The first group is
 * rewritten or checked by the command's own rewriter (package {@code rewrite}); the second is
 * examined the same way for every command ({@code rewrite.query.Arguments}).
 */
public enum ArgKind {
    // ---- rewritten or checked by the command's rewriter ----
    /** The command's own element (its collection, or 1) and {@code $db}: read to find the namespace. */
    NAMESPACE,
    /** A query filter: equality on deterministic fields rewritten to envelopes, the rest checked or refused. */
    FILTER,
    /** An update: operators, a replacement or a pipeline; what it writes to policy fields is encrypted. */
    UPDATE,
    /** An aggregation pipeline: the first $match rewritten, every stage followed and checked. */
    PIPELINE,
    /** Documents to insert: policy fields encrypted. */
    DOCUMENTS,
    /** update's statements, each examined by its own fields ({@link Arg#fields}). */
    UPDATE_STATEMENTS,
    /** delete's statements, each examined by its own fields. */
    DELETE_STATEMENTS,
    /** bulkWrite's operations, each on the namespace its index names in nsInfo. */
    BULK_OPERATIONS,
    /** bulkWrite's namespaces. */
    NAMESPACES,
    /** arrayFilters: conditions on array elements, checked against the paths they filter. */
    ARRAY_FILTERS,
    /** createIndexes' index specifications, each examined by its own fields. */
    INDEX_SPECS,
    /** A filter the server keeps (a validator, a partial index's filter): only $exists on policy fields. */
    STORED_FILTER,
    /** A view definition (viewOn, pipeline): an encrypted collection cannot become a view. */
    VIEW,
    /** distinct's key: a path, refused inside an encrypted value. */
    DISTINCT_KEY,
    /** killCursors' cursor ids: the proxy forgets their shapes. */
    CURSOR_IDS,
    /** update's constants (c): refused where they name a policy field. */
    CONSTANTS,

    // ---- examined the same way for every command ----
    /** A sort, or an update statement's sort: refused on policy fields (it would order ciphertexts). */
    SORT,
    /** find's min and max: index bounds, refused on policy fields like a sort. */
    BOUNDS,
    /** A find projection or findAndModify's fields: inclusion and exclusion of policy fields only. */
    PROJECTION,
    /** An index to use or drop: its name, or a key pattern whose values are directions or index types. */
    INDEX,
    /** A key pattern (an index's, a shard key's): names with directions or index types, never values. */
    KEY_PATTERN,
    /** Collation: its known settings ({@link Arg#fields}: locale, strength, ...), each a single value. */
    COLLATION,
    /** let: variables, as aggregation expressions; refused where they name a policy field. */
    LET,
    /**
     * comment: anything the application likes, which the server writes into its logs, profiler and
     * currentOp. A string passes; a document or array passes only if no name in it is a policy
     * field's path and no string in it refers to one ($ssn, $$ROOT, $$CURRENT).
     */
    COMMENT,
    /** A scalar option (number, boolean, string, null, timestamp, binary): never a document or array. */
    OPTION,
    /** A list of names (strings), e.g. setIndexCommitQuorum's indexNames. */
    NAMES,
    /**
     * A document of settings with known fields ({@link Arg#fields}: readConcern, writeConcern,
     * lsid, $clusterTime, $readPreference, a cursor's batchSize); a field it does not know is refused.
     */
    SETTINGS,
    /**
     * A document of server configuration (storageEngine, timeseries, clusteredIndex, a search index
     * definition, a user's roles, ...): it describes the collection or the server, never holds
     * documents' values, so it is forwarded as it is unless a name in it is a policy field's path.
     */
    CONFIGURATION,
    /**
     * A filter over what the server says about itself (collections, databases, operations, profiler
     * entries, users), never over a collection's documents: it may name only the fields its row
     * lists ({@link Arg#fields}; under a field of kind CONFIGURATION, any path that names no policy
     * field), compare them with single values or lists of them, and combine conditions with $and,
     * $or, $nor and $not. Anything else ($expr, $where, $elemMatch, a document as a value) is refused.
     */
    METADATA_FILTER,
    /** A list of settings documents with known fields ({@link Arg#fields}): session ids, users. */
    SETTINGS_LIST,
    /**
     * What a driver says of itself in the handshake (hello's {@code client}): a document whose
     * top-level fields are the MongoDB Handshake spec's ({@link Arg#fields}: application, driver, os,
     * platform, env), forwarded as it is below them (drivers' names, versions, platforms: no
     * document's values, and names such as {@code name} and {@code version} that a policy may well
     * have too).
     */
    DRIVER_METADATA,
    /** explain's command: examined as if it were sent itself. */
    COMMAND
}
