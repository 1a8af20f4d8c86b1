package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.bson.BsonDocument;

/**
 * The {@link UpstreamCalls} of one session, used on its event loop only. Their requestIDs are the
 * proxy's own, counted down from -1 and never one a tracked client request is waiting on; a
 * client request that reuses one still waiting closes the connection ({@link #inUse}), so no
 * reply is ever given to the wrong party.
 */
final class SessionCalls implements UpstreamCalls {
    private final ProxySession session;
    private final Map<Integer, CompletableFuture<Frame>> waiting = new HashMap<>();
    private int nextId = -1;

    SessionCalls(ProxySession session) {
        this.session = session;
    }

    @Override
    public CompletionStage<Frame> command(BsonDocument body) {
        CompletableFuture<Frame> reply = new CompletableFuture<>();
        if (session.isClosed() || session.upstream() == null) {
            reply.completeExceptionally(new IllegalStateException("the connection to the upstream is closed"));
            return reply;
        }
        int id = freeId();
        waiting.put(id, reply);
        ByteBuf encoded = new OpMsg(0, body).encode(session.upstream().alloc(), id, 0);
        session.observer().upstreamBytes(false, encoded.readableBytes());
        session.upstream().writeAndFlush(encoded);
        return reply;
    }

    /** True if the frame answers one of these calls: it is handed to the caller, not to the lane. */
    boolean complete(Frame frame) {
        if (waiting.isEmpty()) {
            return false;
        }
        CompletableFuture<Frame> reply = waiting.remove(frame.responseTo());
        if (reply == null) {
            return false;
        }
        if (!reply.complete(frame)) {
            frame.release();
        }
        return true;
    }

    /** True while a call with this requestID waits for its reply. */
    boolean inUse(int requestId) {
        return waiting.containsKey(requestId);
    }

    /** The session closed: every call still waiting fails. */
    void failAll() {
        for (CompletableFuture<Frame> reply : waiting.values()) {
            reply.completeExceptionally(new IllegalStateException("the connection closed before the upstream answered"));
        }
        waiting.clear();
    }

    private int freeId() {
        while (waiting.containsKey(nextId) || session.pending().waitsFor(nextId)) {
            nextId = nextId == Integer.MIN_VALUE ? -1 : nextId - 1;
        }
        int id = nextId;
        nextId = nextId == Integer.MIN_VALUE ? -1 : nextId - 1;
        return id;
    }
}
