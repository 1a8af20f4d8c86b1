package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.ReadShape;
import dev.fleproxy.rewrite.pipeline.PipelineSchema;
import dev.fleproxy.rewrite.read.CursorOwner;
import dev.fleproxy.rewrite.read.ReadCommands;
import dev.fleproxy.rewrite.read.Replies;
import dev.fleproxy.rewrite.read.ReplyPlan;
import dev.fleproxy.rewrite.write.CollectionDefinitions;
import dev.fleproxy.rewrite.write.Inserts;
import dev.fleproxy.rewrite.write.WriteCommands;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import java.util.function.UnaryOperator;

/**
 * A command on an encrypted collection, once {@link EncryptionFilter} has examined it and has its
 * key: run through the rewriter its row names ({@link CommandSpec.Rewriter}), a read with the plan
 * of what its reply needs.
 */
final class Rewriters {
    private final Replies replies;

    Rewriters(Replies replies) {
        this.replies = replies;
    }

    /** The command run through the rewriter its entry names; a read also says what its reply needs. */
    RequestDecision rewrite(Request request, CommandSpec spec, CollectionContext ctx, Policy p, String db) {
        OpMsgView m = request.msg();
        ReadShape stored = ctx.paths.readShape();
        return switch (spec.rewriter()) {
            case INSERT -> {
                Frame out = Inserts.rewrite(m, ctx, request.alloc());
                yield out == null ? RequestDecision.PASS : RequestDecision.replace(out);
            }
            case UPDATE -> rewrite(request, msg -> WriteCommands.update(msg, ctx, spec.arg("updates")));
            case DELETE -> rewrite(request, msg -> WriteCommands.delete(msg, ctx, spec.arg("deletes")));
            case FIND_AND_MODIFY -> expect(request, rewrite(request, msg -> WriteCommands.findAndModify(msg, ctx)),
                    new ReplyPlan(stored, stored.root, spec, CursorOwner.of(request, p)));
            case FIND -> expect(request, ReadCommands.findTouchesNothingEncrypted(m.bodyBytes(), ctx.paths)
                    ? RequestDecision.PASS : rewrite(request, msg -> ReadCommands.find(msg, ctx)),
                    new ReplyPlan(stored, stored.root, spec, CursorOwner.of(request, p)));
            case COUNT -> rewrite(request, msg -> ReadCommands.count(msg, ctx));
            case DISTINCT -> {
                RequestDecision d = rewrite(request, msg -> ReadCommands.distinct(msg, ctx));
                String key = m.bodyString("key");
                yield expect(request, d, new ReplyPlan(stored, key == null ? null : stored.distinctValues(key), spec, CursorOwner.of(request, p)));
            }
            case AGGREGATE -> {
                PipelineSchema schema = new PipelineSchema(ctx);
                RequestDecision d = rewrite(request, msg -> ReadCommands.aggregate(msg, schema, p, db));
                yield expect(request, d, new ReplyPlan(schema.shape(), schema.shape().root, spec, CursorOwner.of(request, p)));
            }
            case GET_MORE -> replies.getMore(request, ctx);
            case CREATE_INDEXES -> {
                CollectionDefinitions.createIndexes(m.body(), ctx, spec.arg("indexes"));
                yield RequestDecision.PASS;
            }
            case COLLECTION_OPTIONS -> {
                CollectionDefinitions.collectionOptions(spec.name(), m.body(), ctx);
                yield RequestDecision.PASS;
            }
            case KILL_CURSORS, BULK_WRITE -> throw new IllegalStateException(spec.name() + " is decided above");
        };
    }

    /**
     * Runs a rewriter on the message by documents; forwards what it returns, or the request as it
     * is when the rewriter gave back the very message it was given.
     */
    private static RequestDecision rewrite(Request request, UnaryOperator<OpMsg> rewriter) {
        OpMsg original = request.msg().toOpMsg();
        OpMsg rewritten = rewriter.apply(original);
        return rewritten == original ? RequestDecision.PASS : RequestDecision.replace(request.encode(rewritten));
    }

    /** A command whose reply holds documents to decrypt: the decision on the request, and the plan for its reply. */
    private static RequestDecision expect(Request request, RequestDecision d, ReplyPlan plan) {
        request.expectReply(plan);
        return d;
    }
}
