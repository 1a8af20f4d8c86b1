package dev.fleproxy.rewrite.write;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.protocol.Command;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import java.util.EnumSet;
import java.util.Set;

/**
 * A filter of its own in front of the encryption filter: the server's answers to commands on
 * encrypted collections that can collide with a unique index (writes, index builds, aggregations
 * that write) have their duplicate-key errors cut ({@link DuplicateKeys}) before any client sees
 * them. The writes the proxy carries out itself cut theirs where they are made.
 */
public final class DuplicateKeyFilter implements MessageFilter {
    private static final Set<CommandSpec.Rewriter> COLLIDE = EnumSet.of(CommandSpec.Rewriter.INSERT,
            CommandSpec.Rewriter.UPDATE, CommandSpec.Rewriter.FIND_AND_MODIFY, CommandSpec.Rewriter.AGGREGATE,
            CommandSpec.Rewriter.CREATE_INDEXES, CommandSpec.Rewriter.COLLECTION_OPTIONS,
            CommandSpec.Rewriter.BULK_WRITE);

    /** What a reply's errors are cut for: the collection written (null: bulkWrite, any). */
    private record Written(CollectionPolicy collection) {
    }

    @Override
    public RequestDecision onRequest(Request request) {
        Command c = request.command();
        if (c == null || c.target() == null || c.spec() == null || !COLLIDE.contains(c.spec().rewriter())) {
            return RequestDecision.PASS;
        }
        request.expectReply(new Written(c.spec().scope() == CommandSpec.Scope.NAMESPACES ? null
                : request.policy().get(c.target())));
        return RequestDecision.PASS;
    }

    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        if (!(state instanceof Written w) || reply.opCode() != OpCode.OP_MSG
                || !DuplicateKeys.mayHold(reply.msg().bodyBytes())) {
            return ReplyDecision.PASS;
        }
        OpMsg msg = reply.msg().toOpMsg();
        org.bson.BsonDocument scrubbed = DuplicateKeys.scrub(msg.body(), w.collection());
        return scrubbed == msg.body() ? ReplyDecision.PASS : ReplyDecision.replace(reply.encode(msg.withBody(scrubbed)));
    }
}
