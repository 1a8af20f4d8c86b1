package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
import dev.fleproxy.wire.OpReply;
import dev.fleproxy.wire.WireMessage;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;

/**
 * Rewrites hello/isMaster in both forms: OP_QUERY → OP_REPLY (drivers' first handshake) and
 * OP_MSG → OP_MSG, including streaming hello whose replies keep coming with moreToCome.
 */
public final class HandshakeFilter implements MessageFilter {
    private final java.util.function.BooleanSupplier encrypting;

    public HandshakeFilter() {
        this(() -> false);
    }

    /** @param encrypting whether collections are encrypted now (advertised message limits shrink then) */
    public HandshakeFilter(java.util.function.BooleanSupplier encrypting) {
        this.encrypting = encrypting;
    }

    @Override
    public RequestDecision onRequest(Request request) {
        if (request.commandName() == null || !HelloRewriter.HELLO_COMMANDS.contains(request.commandName())) {
            return RequestDecision.PASS;
        }
        Frame frame = request.frame();
        request.expectReply(null);
        if (frame.opCode() == OpCode.OP_MSG) {
            OpMsg msg = OpMsg.parse(frame);
            BsonDocument body = HelloRewriter.rewriteRequest(msg.body());
            return body == null ? RequestDecision.PASS : RequestDecision.replace(msg.withBody(body));
        }
        OpQuery query = OpQuery.parse(frame);
        BsonDocument command = HelloRewriter.rewriteRequest(query.command());
        return command == null ? RequestDecision.PASS : RequestDecision.replace(query.withCommand(command));
    }

    @Override
    public WireMessage onReply(Frame reply, Object state) {
        if (reply.opCode() == OpCode.OP_MSG) {
            OpMsg msg = OpMsg.parse(reply);
            BsonDocument body = HelloRewriter.rewriteReply(msg.body(), encrypting.getAsBoolean());
            return body == null ? null : msg.withBody(body);
        }
        if (reply.opCode() == OpCode.OP_REPLY) {
            OpReply legacy = OpReply.parse(reply);
            List<BsonDocument> docs = new ArrayList<>(legacy.documents().size());
            boolean changed = false;
            for (BsonDocument d : legacy.documents()) {
                BsonDocument rewritten = HelloRewriter.rewriteReply(d, encrypting.getAsBoolean());
                changed |= rewritten != null;
                docs.add(rewritten == null ? d : rewritten);
            }
            return changed ? legacy.withDocuments(docs) : null;
        }
        return null;
    }
}
