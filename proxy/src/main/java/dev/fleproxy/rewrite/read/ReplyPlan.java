package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.rewrite.paths.ReadShape;

/**
 * What the reply to a request needs: the command it answers (for the metrics), the shape of the documents it returns (documents null:
 * nothing to decrypt), for distinct the shape of each value; whether it opens a cursor whose later
 * batches (getMore) have the same shape, who opened it, and which cursor a getMore's reply continues.
 */
public record ReplyPlan(String command, ReadShape shape, ReadShape.Node documents, boolean distinct, boolean cursor,
                        CursorOwner owner, long getMoreOf) {
    /** The plan for the reply to this command, shaped as the command table says its reply is. */
    public ReplyPlan(ReadShape shape, ReadShape.Node documents, CommandSpec spec, CursorOwner owner) {
        this(spec.name(), shape, documents, spec.rewriter().reply() == CommandSpec.Reply.VALUES,
                spec.rewriter().reply() == CommandSpec.Reply.CURSOR, owner, 0);
    }
}
