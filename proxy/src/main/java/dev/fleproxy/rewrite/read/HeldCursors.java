package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.bson.BsonValue;
import org.bson.ByteBuf;
import org.bson.RawBsonDocument;

/**
 * The answers of evaluated queries that did not fit in their first batch, held by the proxy as its
 * own cursors and answered from getMore (docs/query-model.md, "Answers in batches"). Proxy-wide,
 * since a driver may send a getMore on another pooled connection. Bounded, so that a peer opening
 * cursors and never reading them costs a fixed amount: at most {@link #MAX_CURSORS} cursors, their
 * documents drawn from the proxy-wide {@link EvaluationMemory} (shared with the candidates of the
 * queries being evaluated), each forgotten after {@link #IDLE} without a getMore
 * (the server's own default cursor timeout), or when killCursors names it. So that one client
 * cannot take them all, one identity holds at most {@link #MAX_PER_IDENTITY} and one connection
 * {@link #MAX_PER_CONNECTION}; and the cursors opened outside a session (which no other
 * connection can continue) are forgotten when their connection closes.
 *
 * <p>A cursor is bound to the namespace, the session (lsid) and the identity of the query that
 * opened it (its documents are masked for that identity already): a getMore from another session
 * or identity, or on another collection, is answered as for an unknown cursor.
 * Its id is 63 bits from {@link SecureRandom}, so an id cannot be guessed from the ones seen.
 */
final class HeldCursors {
    static final int MAX_CURSORS = 1_000;
    static final int MAX_PER_IDENTITY = MAX_CURSORS / 4;
    static final int MAX_PER_CONNECTION = MAX_CURSORS / 10;
    static final Duration IDLE = Duration.ofMinutes(10);

    /** One batch of a held answer, and the cursor id to return with it (0: the answer is complete). */
    record Batch(List<RawBsonDocument> documents, long cursorId) {
    }

    private static final class Held {
        final String ns;
        final BsonValue lsid;
        final String identity;
        final long connection;
        final ArrayDeque<RawBsonDocument> rest;
        long bytes;
        long lastUsed;

        Held(String ns, BsonValue lsid, String identity, long connection, ArrayDeque<RawBsonDocument> rest, long bytes,
             long now) {
            this.ns = ns;
            this.lsid = lsid;
            this.identity = identity;
            this.connection = connection;
            this.rest = rest;
            this.bytes = bytes;
            this.lastUsed = now;
        }
    }

    private final SecureRandom random = new SecureRandom();
    private final LongSupplier nanoClock;
    private final Map<Long, Held> byId = new HashMap<>();
    /** Cursors held, by identity ("" without identities) and by connection: for their caps. */
    private final Map<String, Integer> byIdentity = new HashMap<>();
    private final Map<Long, Integer> byConnection = new HashMap<>();
    private long bytes;
    /** The proxy-wide budget the documents held are drawn from. */
    private final EvaluationMemory memory;

    HeldCursors(EvaluationMemory memory) {
        this(System::nanoTime, memory);
    }

    /** @param nanoClock the clock idle time is measured on (a test's own) */
    HeldCursors(LongSupplier nanoClock, EvaluationMemory memory) {
        this.nanoClock = nanoClock;
        this.memory = memory;
    }

    /**
     * Holds the rest of an answer (after its first batch); returns the cursor id to answer with.
     * Refused (9720013) when the proxy already holds as many cursors or bytes as it may.
     */
    long hold(String ns, BsonValue lsid, String identity, long connection, ArrayDeque<RawBsonDocument> rest) {
        // each document in bytes of its own: one read as a slice of a larger reply would keep all of it
        ArrayDeque<RawBsonDocument> own = new ArrayDeque<>(rest.size());
        long size = 0;
        for (RawBsonDocument d : rest) {
            ByteBuf b = d.getByteBuffer();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            own.add(new RawBsonDocument(bytes));
            size += bytes.length;
        }
        return holdOwn(ns, lsid, identity, connection, own, size);
    }

    private synchronized long holdOwn(String ns, BsonValue lsid, String identity, long connection,
                                      ArrayDeque<RawBsonDocument> rest, long size) {
        long now = nanoClock.getAsLong();
        forgetIdle(now);
        String who = identity == null ? "" : identity;
        if (byIdentity.getOrDefault(who, 0) >= MAX_PER_IDENTITY || byConnection.getOrDefault(connection, 0)
                >= MAX_PER_CONNECTION) {
            throw new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, ns + ": the answer to a query the proxy evaluated "
                    + "does not fit in one batch, and this connection or identity already holds as many such cursors as "
                    + "it may (" + MAX_PER_CONNECTION + " a connection, " + MAX_PER_IDENTITY + " an identity); read or "
                    + "close its open cursors, or narrow the query, add a limit or a projection");
        }
        if (byId.size() >= MAX_CURSORS || !memory.take(size)) {
            throw new Refusal(ProxyError.EVALUATED_RESULT_TOO_LARGE, ns + ": the answer to a query the proxy evaluated "
                    + "does not fit in one batch, and the proxy already holds " + byId.size() + " such cursors ("
                    + (bytes / (1024 * 1024)) + " MiB; at most " + MAX_CURSORS + ", and " + memory.budget() / (1024 * 1024)
                    + " MiB with the candidates of queries being evaluated: maxEvaluationBytes); read or close the open "
                    + "cursors, or narrow the query, add a limit or a projection");
        }
        long id;
        do {
            id = random.nextLong() & Long.MAX_VALUE;
        } while (id == 0 || byId.containsKey(id));
        byId.put(id, new Held(ns, lsid, identity, connection, rest, size, now));
        byIdentity.merge(who, 1, Integer::sum);
        byConnection.merge(connection, 1, Integer::sum);
        bytes += size;
        return id;
    }

    /**
     * True if this id is a cursor the proxy holds, idle or not: a lookup and nothing more, for
     * every getMore on a plain collection (which must not name one).
     */
    synchronized boolean knows(long id) {
        return byId.containsKey(id);
    }

    /** True if this id is a cursor the proxy holds (idle ones forgotten first). */
    synchronized boolean holds(long id) {
        forgetIdle(nanoClock.getAsLong());
        return byId.containsKey(id);
    }

    /**
     * The next batch of a held cursor, for a getMore on {@code ns} in session {@code lsid}; null
     * if no such cursor is held for them (unknown, idle too long, killed, or another session's).
     */
    synchronized Batch next(long id, String ns, BsonValue lsid, String identity, int batchSize, int batchBytes) {
        long now = nanoClock.getAsLong();
        forgetIdle(now);
        Held h = byId.get(id);
        if (h == null || !h.ns.equals(ns) || !Objects.equals(h.lsid, lsid) || !Objects.equals(h.identity, identity)) {
            return null;
        }
        h.lastUsed = now;
        List<RawBsonDocument> batch = take(h.rest, batchSize, batchBytes);
        long taken = 0;
        for (RawBsonDocument d : batch) {
            taken += d.getByteBuffer().remaining();
        }
        h.bytes -= taken;
        bytes -= taken;
        memory.give(taken);
        if (h.rest.isEmpty()) {
            forget(id);
            return new Batch(batch, 0);
        }
        return new Batch(batch, id);
    }

    /**
     * killCursors of a held cursor on {@code ns}, by the session and identity that opened it: true
     * if it was held for them (and is now forgotten).
     */
    synchronized boolean kill(long id, String ns, BsonValue lsid, String identity) {
        Held h = byId.get(id);
        if (h == null || !h.ns.equals(ns) || !Objects.equals(h.lsid, lsid) || !Objects.equals(h.identity, identity)) {
            return false;
        }
        forget(id);
        return true;
    }

    synchronized int count() {
        return byId.size();
    }

    synchronized long bytes() {
        return bytes;
    }

    /**
     * Takes a batch off the front of {@code documents}: at most {@code batchSize} of them (0 or
     * less: no limit) and, past the first, no more than {@code batchBytes} in all, as the server
     * fills a batch.
     */
    static List<RawBsonDocument> take(ArrayDeque<RawBsonDocument> documents, int batchSize, int batchBytes) {
        List<RawBsonDocument> batch = new ArrayList<>();
        long size = 0;
        while (!documents.isEmpty() && (batchSize <= 0 || batch.size() < batchSize)) {
            int next = documents.peekFirst().getByteBuffer().remaining();
            if (!batch.isEmpty() && size + next > batchBytes) {
                break;
            }
            batch.add(documents.pollFirst());
            size += next;
        }
        return batch;
    }

    /** The connection closed: the cursors it opened outside a session are forgotten (no one else can read them). */
    synchronized void connectionClosed(long connection) {
        forgetWhere(h -> h.connection == connection && h.lsid == null);
    }

    synchronized int count(String identity) {
        return byIdentity.getOrDefault(identity == null ? "" : identity, 0);
    }

    private void forgetIdle(long now) {
        long idle = IDLE.toNanos();
        forgetWhere(h -> now - h.lastUsed > idle);
    }

    private void forgetWhere(java.util.function.Predicate<Held> which) {
        for (Iterator<Map.Entry<Long, Held>> it = byId.entrySet().iterator(); it.hasNext(); ) {
            Held h = it.next().getValue();
            if (which.test(h)) {
                it.remove();
                counted(h);
            }
        }
    }

    private void forget(long id) {
        Held h = byId.remove(id);
        if (h != null) {
            counted(h);
        }
    }

    /** A cursor no longer held: its bytes and its place in its identity's and connection's counts given back. */
    private void counted(Held h) {
        bytes -= h.bytes;
        memory.give(h.bytes);
        byIdentity.computeIfPresent(h.identity == null ? "" : h.identity, (k, n) -> n == 1 ? null : n - 1);
        byConnection.computeIfPresent(h.connection, (k, n) -> n == 1 ? null : n - 1);
    }
}
