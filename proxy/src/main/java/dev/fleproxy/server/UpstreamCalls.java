package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import java.util.concurrent.CompletionStage;
import org.bson.BsonDocument;

/**
 * Commands the proxy sends on a session's own upstream connection, for a filter that must read
 * more before it can answer (the candidates of a query the proxy evaluates). They run with the
 * connection's authentication and carry what the filter puts in them (the client's lsid,
 * txnNumber, …); their replies never reach the client. A filter that waits for one answers
 * {@link ReplyDecision#awaitUpstream}, so the upstream connection is still read meanwhile.
 */
public interface UpstreamCalls {
    /**
     * Sends the command (an OP_MSG body, $db included). The stage completes on the connection's
     * event loop with the reply's frame, which the caller owns and must release; it completes
     * exceptionally if the connection closes first.
     */
    CompletionStage<Frame> command(BsonDocument body);
}
