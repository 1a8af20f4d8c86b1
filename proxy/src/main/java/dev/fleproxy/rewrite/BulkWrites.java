package dev.fleproxy.rewrite;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.write.MessageDocuments;
import dev.fleproxy.rewrite.write.WriteCommands;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.OpMsg;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** MongoDB 8.0's bulkWrite, whose operations name their namespaces: see {@link #decide}. */
final class BulkWrites {
    private BulkWrites() {
    }

    /**
     * MongoDB 8.0's bulkWrite: operations on any namespaces, listed in nsInfo. Once one of them is
     * encrypted, its arguments are examined against each encrypted namespace, and every operation
     * and namespace entry on one of them field by field.
     */
    static RequestDecision decide(Request request, CommandSpec spec, Policy p, CollectionKeys keys,
                                  CollectionContexts contexts, Duration kmsWait) {
        OpMsg msg = request.msg().toOpMsg();
        List<BsonDocument> nsInfo = MessageDocuments.of(msg, "nsInfo");
        List<CollectionContext> byIndex = new ArrayList<>(nsInfo.size());
        Map<String, CollectionContext> encrypted = new LinkedHashMap<>();
        for (BsonDocument info : nsInfo) {
            CollectionPolicy cp = info.isString("ns") ? p.get(info.getString("ns").getValue()) : null;
            CollectionContext ctx = cp == null ? null : encrypted.computeIfAbsent(cp.namespace(), ns -> contexts.of(cp, keys));
            byIndex.add(ctx);
            if (ctx != null) {
                Arguments.examineFields(info, spec.arg("nsInfo"), ctx);
            }
        }
        if (encrypted.isEmpty()) {
            return RequestDecision.PASS;
        }
        String named = encrypted.keySet().iterator().next();
        for (CollectionContext ctx : encrypted.values()) {
            Arguments.examine(spec, request.msg(), ctx);
        }
        EncryptionFilter.refuseBadNames(request, named);
        encrypted.values().forEach(ctx -> keys.need(ctx.policy.keyId()));
        if (keys.hasPending()) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        OpMsg out = WriteCommands.bulkWrite(msg, byIndex, named, spec.arg("ops"));
        // Its cursor holds per-operation results, not documents: nothing in its reply is decrypted
        // (a duplicate-key error's keyValue shows the envelope, as stored).
        return out == msg ? RequestDecision.PASS : RequestDecision.replace(request.encode(out));
    }
}
