package dev.fleproxy.server;

import dev.fleproxy.metrics.LoopMeters;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.wire.Frame;
import io.netty.channel.EventLoop;

/**
 * What a session tells the metrics, in the session's own terms. {@link #of} picks the metered
 * observer ({@link SessionMeters}) when metrics are on; otherwise only the close is passed on (and
 * ignored by disabled metrics), so the session itself never asks whether metrics are on.
 */
interface SessionObserver {
    /** Bytes of a frame from ({@code in}) or to the client. */
    default void clientBytes(boolean in, int bytes) {
    }

    /** Bytes of a frame from ({@code in}) or to the upstream. */
    default void upstreamBytes(boolean in, int bytes) {
    }

    /** A request a filter answered itself (nothing of it was forwarded as it was). */
    default void answered(Request request) {
    }

    /** A request was read and is about to enter the filters. */
    default void read(Request request) {
    }

    /** A request was answered with an error instead of being forwarded. */
    default void refused(String command, int code) {
    }

    /** A request closed the connection (a filter decided so). */
    default void closedBy(Request request) {
    }

    /** A request goes to the upstream as {@code out}; a reply is expected unless moreToCome. */
    default void forwarded(Request request, Frame out, boolean replyComes) {
    }

    /** A reply was read from the upstream. */
    default void read(Reply reply) {
    }

    /** A reply goes to the client as {@code out}. */
    default void written(Reply reply, Frame out) {
    }

    /** The connection closed, for this reason ("normal" if none was named). */
    void sessionClosed(String reason);

    /** The observer of a connection on this loop. */
    static SessionObserver of(ProxyMetrics metrics, EventLoop loop) {
        LoopMeters meters = metrics.loopMeters(loop);
        return meters != null ? new SessionMeters(metrics, meters) : metrics::closed;
    }
}
