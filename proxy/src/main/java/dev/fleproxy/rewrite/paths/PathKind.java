package dev.fleproxy.rewrite.paths;

/** Where a path stands relative to the encrypted fields of the documents it is asked about. */
public enum PathKind {
    /** Nothing encrypted at or under this path. */
    NONE,
    /** The path is an encrypted field. */
    EXACT,
    /** The path points inside an encrypted value (which is one opaque envelope). */
    INSIDE,
    /** Encrypted fields lie under this path (a sub-document or array holding them). */
    PREFIX
}
