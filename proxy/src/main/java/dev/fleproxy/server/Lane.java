package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One direction of a session, strictly in order: frames are handled one at a time through the
 * filters. A message a filter answers with await is parked (never waited for on the loop) with the
 * deadline the filter gave, the frames behind it queue, and this lane's source is not read; when
 * what it waits for is ready, or its deadline passes, it goes on from the filter that parked it, on
 * the connection's loop, and the queue drains. Both lanes of a session share its one event loop,
 * so nothing here needs locking.
 *
 * @param <M> what travels this lane: a {@link Request} or a {@link Reply}
 */
abstract class Lane<M extends InFlight> {
    final ProxySession session;
    private final SessionHandler.Side side;
    private final ArrayDeque<Frame> backlog = new ArrayDeque<>();
    private Parked<M> parked;
    /** Backpressure of this lane's source; null until that source exists (the upstream connects later). */
    private Flow flow;

    Lane(ProxySession session, SessionHandler.Side side) {
        this.session = session;
        this.side = side;
    }

    /** Handles one frame from the filters' first on: forwards, answers, closes, or parks it. */
    abstract void handle(Frame frame);

    /** Runs the filters from the given one on, for a message that was parked there. */
    abstract void continueFrom(M message, int filterIndex);

    /** Counts a frame read from this lane's source. */
    abstract void counted(Frame frame);

    /** True if the frame is taken before the lane's order (the reply to one of the proxy's own calls). */
    boolean intercepted(Frame frame) {
        return false;
    }

    /** False while frames must queue for another reason than a parked message (no upstream yet). */
    boolean mayHandle() {
        return true;
    }

    /**
     * Wraps a frame into this lane's message; the frame is released if the wrapping fails, so a
     * message that never existed holds no buffer.
     */
    final M adopt(Frame frame, Function<Frame, M> wrap) {
        M message;
        try {
            message = wrap.apply(frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
        return message;
    }

    final void flow(Flow f) {
        flow = f;
    }

    final Flow flow() {
        return flow;
    }

    /** A frame from this lane's source. */
    final void receive(Frame frame) {
        if (session.isClosed()) {
            frame.release();
            return;
        }
        counted(frame);
        if (intercepted(frame)) {
            return;
        }
        if (parked != null || !backlog.isEmpty() || !mayHandle()) {
            backlog.add(frame); // behind a parked message, or before the upstream is ready: order is kept
            return;
        }
        handle(frame);
    }

    final void readComplete() {
        if (flow != null) {
            flow.readComplete();
        }
    }

    /** Handles the frames that waited, until one parks again; reads the source again if none did. */
    final void drain() {
        while (parked == null && !session.isClosed() && !backlog.isEmpty()) {
            handle(backlog.poll());
        }
        flow.flush();
        if (parked == null) {
            flow.release();
        }
    }

    /** Compression is never negotiated: a compressed frame is a protocol error (the frame is released). */
    static void refuseCompressed(Frame frame) {
        if (frame.opCode() == OpCode.OP_COMPRESSED) {
            try {
                throw SessionFailures.compressedNotNegotiated(frame);
            } finally {
                frame.release();
            }
        }
    }

    /** The oldest frame that waited, or null. */
    final Frame nextWaiting() {
        return backlog.poll();
    }

    final boolean hasWaiting() {
        return !backlog.isEmpty();
    }

    /** True if this message is the one parked (its lane, not its handler, releases it). */
    final boolean isParked(M message) {
        return parked != null && parked.message == message;
    }

    /** Parks a message until {@code ready} completes or {@code maxWait} from its first park has passed. */
    final void park(M message, int filterIndex, CompletionStage<?> ready, Duration maxWait) {
        park(message, filterIndex, ready, maxWait, true);
    }

    /**
     * Parks a message; with {@code holdSource} false its source is still read (what it waits for
     * comes that way: the reply to the proxy's own upstream call), frames other than that queue.
     */
    final void park(M message, int filterIndex, CompletionStage<?> ready, Duration maxWait, boolean holdSource) {
        long now = System.nanoTime();
        message.parkedAt(now);
        Parked<M> p = new Parked<>(message, filterIndex, maxWait.toNanos());
        parked = p;
        if (holdSource) {
            flow.hold();
        } else if (flow.isHeld()) {
            flow.release(); // parked again after a wait that held it: what this one waits for comes from the source
        }
        EventLoop loop = session.loop();
        p.timer = loop.schedule(() -> resume(p, true), Math.max(0, p.maxWaitNanos - (now - message.parkedSinceNanos())),
                TimeUnit.NANOSECONDS);
        ready.whenComplete((v, e) -> {
            try {
                loop.execute(() -> resume(p, false));
            } catch (RejectedExecutionException shuttingDown) {
                // the proxy is stopping; the session is closed with its loop
            }
        });
    }

    private void resume(Parked<M> p, boolean waitedOut) {
        if (p.resumed) {
            return;
        }
        p.resumed = true;
        p.timer.cancel(false);
        parked = null;
        if (session.isClosed()) {
            p.message.release();
            return;
        }
        try {
            M m = p.message;
            m.waitedOut(waitedOut || System.nanoTime() - m.parkedSinceNanos() >= p.maxWaitNanos);
            continueFrom(m, p.filterIndex);
            drain();
        } catch (Throwable t) {
            session.failed(side, t);
        }
    }

    /** Frees what waited and the parked message (once: a parked one resuming later finds it done). */
    final void releaseAll() {
        for (Frame f : backlog) {
            f.release();
        }
        backlog.clear();
        if (parked != null && !parked.resumed) {
            parked.resumed = true;
            parked.timer.cancel(false);
            parked.message.release();
        }
        parked = null;
    }

    /** A message waiting, with where its filters stopped and how long it may wait in all. */
    private static final class Parked<M extends InFlight> {
        final M message;
        final int filterIndex;
        final long maxWaitNanos;
        ScheduledFuture<?> timer;
        boolean resumed;

        Parked(M message, int filterIndex, long maxWaitNanos) {
            this.message = message;
            this.filterIndex = filterIndex;
            this.maxWaitNanos = maxWaitNanos;
        }
    }
}
