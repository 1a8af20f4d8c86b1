package dev.fleproxy.server;

import dev.fleproxy.metrics.LoopMeters;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.wire.Frame;

/**
 * The metered {@link SessionObserver}: counts into its event loop's {@link LoopMeters} (only that
 * loop uses them, so no locking) and times each forwarded request until its first reply.
 */
final class SessionMeters implements SessionObserver {
    private final ProxyMetrics metrics;
    private final LoopMeters meters;
    /** Forwarded requests awaiting their first reply. */
    private final RequestTimings timings = new RequestTimings();

    SessionMeters(ProxyMetrics metrics, LoopMeters meters) {
        this.metrics = metrics;
        this.meters = meters;
    }

    @Override
    public void clientBytes(boolean in, int bytes) {
        meters.clientBytes(in, bytes);
    }

    @Override
    public void upstreamBytes(boolean in, int bytes) {
        meters.upstreamBytes(in, bytes);
    }

    @Override
    public void read(Request request) {
        request.readAt(System.nanoTime());
    }

    @Override
    public void refused(String command, int code) {
        meters.request(command, ProxyMetrics.Outcome.REFUSED);
        metrics.refused(command, code);
    }

    @Override
    public void answered(Request request) {
        meters.request(request.commandName(), ProxyMetrics.Outcome.ANSWERED);
    }

    @Override
    public void closedBy(Request request) {
        meters.request(request.commandName(), ProxyMetrics.Outcome.CLOSED);
    }

    @Override
    public void forwarded(Request request, Frame out, boolean replyComes) {
        meters.request(request.commandName(), request.replaced() ? ProxyMetrics.Outcome.REWRITTEN
                : ProxyMetrics.Outcome.FORWARDED);
        meters.upstreamBytes(false, out.length());
        if (replyComes) {
            timings.add(out.requestId(), new RequestTiming(request.readAtNanos(), System.nanoTime(),
                    request.collectionLabel()));
        }
    }

    @Override
    public void read(Reply reply) {
        // the first reply to a request (an exhaust stream's later ones answer no request of the client's)
        RequestTiming t = timings.take(reply.received().responseTo());
        if (t != null) {
            reply.timed(t, System.nanoTime());
        }
    }

    @Override
    public void written(Reply reply, Frame out) {
        meters.clientBytes(false, out.length());
        RequestTiming t = reply.timing();
        if (t != null) {
            meters.latency(t.collection(), System.nanoTime() - t.readAtNanos(), reply.readAtNanos() - t.forwardedAtNanos());
        }
    }

    @Override
    public void sessionClosed(String reason) {
        metrics.closed(reason);
    }
}
