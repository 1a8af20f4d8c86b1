package dev.fleproxy.access;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Command;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.write.MessageDocuments;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.OpMsg;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The query and write rules of policy fields, a filter of its own in front of the encryption
 * filter (docs/access.md): a request on an encrypted collection that queries or writes a field
 * its connection's identity may not is refused with 9720040 before anything else looks at it
 * ({@link FieldUse}). What an identity gets to see of a field (its masks) is applied where the
 * replies are decrypted.
 */
public final class AccessFilter implements MessageFilter {

    @Override
    public RequestDecision onRequest(Request request) {
        Command command = request.command();
        Policy p = request.policy();
        if (command == null || command.target() == null || command.legacyHandshake() || !p.hasAccessRules()) {
            return RequestDecision.PASS;
        }
        String identity = request.peer().identity(p.identities());
        try {
            OpMsg msg = request.msg().toOpMsg();
            if (command.spec().scope() == CommandSpec.Scope.NAMESPACES) {
                bulkWrite(msg, p, identity);
            } else {
                FieldUse.check(command.spec(), msg, p.get(command.target()), identity);
                if (command.spec().rewriter() == CommandSpec.Rewriter.AGGREGATE) {
                    FieldUse.output(msg.body(), p, p.get(command.target()), identity);
                }
            }
            return RequestDecision.PASS;
        } catch (Refusal r) {
            return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), r.error(), r.getMessage()));
        }
    }

    /** bulkWrite: each operation on an encrypted namespace (by its index into nsInfo) held to that collection's rules. */
    private static void bulkWrite(OpMsg msg, Policy p, String identity) {
        List<BsonDocument> nsInfo = MessageDocuments.of(msg, "nsInfo");
        for (BsonDocument op : MessageDocuments.of(msg, "ops")) {
            for (String kind : List.of("insert", "update", "delete")) {
                BsonValue i = op.get(kind);
                if (i != null && i.isNumber() && i.asNumber().intValue() >= 0 && i.asNumber().intValue() < nsInfo.size()) {
                    BsonDocument info = nsInfo.get(i.asNumber().intValue());
                    CollectionPolicy cp = info.isString("ns") ? p.get(info.getString("ns").getValue()) : null;
                    if (cp != null) {
                        FieldUse.checkOperation(op, cp, identity);
                    }
                }
            }
        }
    }
}
