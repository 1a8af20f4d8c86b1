package dev.fleproxy.rewrite.pipeline;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.FieldPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.paths.ReadShape;
import dev.fleproxy.rewrite.query.Expressions;
import org.bson.BsonValue;

/**
 * What an aggregation pipeline knows about encrypted values as its stages are checked in order:
 * the collection's encrypted paths, which stay encrypted for every check (a later stage may not
 * compute on a name that held one, even if a stage replaced it), and the {@link ReadShape} of the
 * documents the stage receives: where envelopes are, copied or not, and what the reply may open.
 */
public final class PipelineSchema implements FieldPaths {
    public final CollectionContext ctx;
    /** The documents as they leave the stages checked so far. */
    ReadShape shape;

    public PipelineSchema(CollectionContext ctx) {
        this.ctx = ctx;
        this.shape = ctx.paths.readShape().copy();
    }

    /** The documents as they leave the stages checked so far: after a whole pipeline, what it returns. */
    public ReadShape shape() {
        return shape;
    }

    /** Like {@link EncryptedPaths#classify}, also knowing the copies. */
    @Override
    public PathKind kind(String path) {
        PathKind k = ctx.paths.classify(path).kind();
        return k != PathKind.NONE ? k : shape.kind(path);
    }

    boolean deterministic(String path) {
        EncryptedPaths.Match m = ctx.paths.classify(path);
        return m.kind() == PathKind.EXACT && m.rule().deterministic();
    }

    @Override
    public Refusal refuse(String path, String what) {
        EncryptedPaths.Match m = ctx.paths.classify(path);
        return Refusal.onField(ctx.ns(), m.rule() != null ? m.rule().path() : path, what);
    }

    public void refuseReferences(BsonValue expr, String where) {
        Expressions.refuseReferences(expr, this, where);
    }

    /** Any string or key naming an encrypted field, for stages whose syntax we do not know. */
    public void refuseMentions(BsonValue spec, String stage) {
        Expressions.refuseMentions(spec, this, "the stage " + stage, true);
    }
}
