package dev.fleproxy.server;

import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.types.ObjectId;

/**
 * Rewrites hello/isMaster in both forms: OP_QUERY → OP_REPLY (drivers' first handshake) and
 * OP_MSG → OP_MSG, including streaming hello whose replies keep coming with moreToCome. A
 * load-balanced hello ({@code loadBalanced: true}) is answered as a mongos behind a balancer, with
 * this proxy's {@code serviceId} (docs/operations.md, "Running several proxies").
 */
public final class HandshakeFilter implements MessageFilter {
    private final java.util.function.BooleanSupplier encrypting;
    private final boolean asRouter;
    /** This proxy instance as drivers in load-balanced mode know it: one per process. */
    private final ObjectId serviceId;

    /** What a load-balanced hello's reply needs: whether it went upstream as isMaster. */
    private record LoadBalanced(boolean askedAsIsMaster) {
    }

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
        this(encrypting, asRouter, new ObjectId());
    }

    /** @param serviceId what a load-balanced hello's reply names this proxy by */
    public HandshakeFilter(java.util.function.BooleanSupplier encrypting, boolean asRouter, ObjectId serviceId) {
        this.encrypting = encrypting;
        this.asRouter = asRouter;
        this.serviceId = serviceId;
    }

    @Override
    public RequestDecision onRequest(Request request) {
        if (request.commandName() == null || !CommandTable.isHello(request.commandName())) {
            return RequestDecision.PASS;
        }
        if (request.msg() != null) {
            OpMsg msg = request.msg().toOpMsg();
            request.expectReply(state(msg.body()));
            BsonDocument body = HelloRewriter.rewriteRequest(msg.body());
            return body == null ? RequestDecision.PASS : RequestDecision.replace(request.encode(msg.withBody(body)));
        }
        OpQuery query = request.query();
        request.expectReply(state(query.command()));
        BsonDocument command = HelloRewriter.rewriteRequest(query.command());
        return command == null ? RequestDecision.PASS : RequestDecision.replace(request.encode(query.withCommand(command)));
    }

    private static LoadBalanced state(BsonDocument hello) {
        return HelloRewriter.loadBalanced(hello) ? new LoadBalanced(HelloRewriter.asksAsIsMaster(hello)) : null;
    }

    /** The upstream's hello reply as the client gets it; null if unchanged. */
    private BsonDocument rewrite(BsonDocument reply, Object state) {
        BsonDocument out = HelloRewriter.rewriteReply(reply, encrypting.getAsBoolean(), asRouter);
        BsonDocument balanced = state instanceof LoadBalanced lb
                ? HelloRewriter.loadBalancedReply(out == null ? reply : out, serviceId, lb.askedAsIsMaster()) : null;
        return balanced != null ? balanced : out;
    }

    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        if (reply.opCode() == OpCode.OP_MSG) {
            OpMsg msg = reply.msg().toOpMsg();
            BsonDocument body = rewrite(msg.body(), state);
            return body == null ? ReplyDecision.PASS : ReplyDecision.replace(reply.encode(msg.withBody(body)));
        }
        if (reply.opCode() == OpCode.OP_REPLY) {
            OpReply legacy = OpReply.parse(reply.frame());
            List<BsonDocument> docs = new ArrayList<>(legacy.documents().size());
            boolean changed = false;
            for (BsonDocument d : legacy.documents()) {
                BsonDocument rewritten = rewrite(d, state);
                changed |= rewritten != null;
                docs.add(rewritten == null ? d : rewritten);
            }
            return changed ? ReplyDecision.replace(reply.encode(legacy.withDocuments(docs))) : ReplyDecision.PASS;
        }
        return ReplyDecision.PASS;
    }
}
