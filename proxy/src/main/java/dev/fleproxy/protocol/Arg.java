package dev.fleproxy.protocol;

import java.util.Map;

/**
 * One argument a command may carry: its name, what it holds, and for arguments made of documents
 * with fields of their own (statements, index specifications, settings) those fields.
 *
 * @param sequence whether drivers may send it as an OP_MSG document sequence (kind 1) instead
 */
public record Arg(String name, ArgKind kind, Map<String, Arg> fields, boolean sequence) {
    public Arg {
        fields = Map.copyOf(fields);
    }

    /** The field of this argument's documents with that name, or null if they may not carry it. */
    public Arg field(String fieldName) {
        return fields.get(fieldName);
    }
}
