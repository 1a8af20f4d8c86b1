package dev.fleproxy.server;

import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;

/**
 * Rewrites hello/isMaster in both forms: OP_QUERY → OP_REPLY (drivers' first handshake) and
 * OP_MSG → OP_MSG, including streaming hello whose replies keep coming with moreToCome.
 */
public final class HandshakeFilter implements MessageFilter {
    private final java.util.function.BooleanSupplier encrypting;
    private final boolean asRouter;

    public HandshakeFilter() {
        this(() -> false);
    }

    /** @param encrypting whether collections are encrypted now (advertised message limits shrink then) */
    public HandshakeFilter(java.util.function.BooleanSupplier encrypting) {
        this(encrypting, false);
    }

    /**
     * @param asRouter in front of a replica set: the proxy answers as a mongos (see
     *                 {@link HelloRewriter#rewriteReply(BsonDocument, boolean, boolean)})
     */
    public HandshakeFilter(java.util.function.BooleanSupplier encrypting, boolean asRouter) {
        this.encrypting = encrypting;
        this.asRouter = asRouter;
    }

    @Override
    public RequestDecision onRequest(Request request) {
        if (request.commandName() == null || !CommandTable.isHello(request.commandName())) {
            return RequestDecision.PASS;
        }
        request.expectReply(null);
        if (request.msg() != null) {
            OpMsg msg = request.msg().toOpMsg();
            BsonDocument body = HelloRewriter.rewriteRequest(msg.body());
            return body == null ? RequestDecision.PASS : RequestDecision.replace(request.encode(msg.withBody(body)));
        }
        OpQuery query = request.query();
        BsonDocument command = HelloRewriter.rewriteRequest(query.command());
        return command == null ? RequestDecision.PASS : RequestDecision.replace(request.encode(query.withCommand(command)));
    }

    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        if (reply.opCode() == OpCode.OP_MSG) {
            OpMsg msg = reply.msg().toOpMsg();
            BsonDocument body = HelloRewriter.rewriteReply(msg.body(), encrypting.getAsBoolean(), asRouter);
            return body == null ? ReplyDecision.PASS : ReplyDecision.replace(reply.encode(msg.withBody(body)));
        }
        if (reply.opCode() == OpCode.OP_REPLY) {
            OpReply legacy = OpReply.parse(reply.frame());
            List<BsonDocument> docs = new ArrayList<>(legacy.documents().size());
            boolean changed = false;
            for (BsonDocument d : legacy.documents()) {
                BsonDocument rewritten = HelloRewriter.rewriteReply(d, encrypting.getAsBoolean(), asRouter);
                changed |= rewritten != null;
                docs.add(rewritten == null ? d : rewritten);
            }
            return changed ? ReplyDecision.replace(reply.encode(legacy.withDocuments(docs))) : ReplyDecision.PASS;
        }
        return ReplyDecision.PASS;
    }
}
