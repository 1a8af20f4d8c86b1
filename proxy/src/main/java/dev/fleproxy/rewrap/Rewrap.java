package dev.fleproxy.rewrap;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.ReplaceOptions;
import dev.fleproxy.policy.CollectionPolicy;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Re-encrypts a live collection in place (issue 16): documents in _id order, a batch at a time,
 * each policy field that is not a current envelope rewritten (see {@link DocumentRewrap}), except
 * values the proxy did not write and may not adopt (issue 26, {@link Adoption}): those are left,
 * counted, and their documents listed by _id. Each batch is one bulk write of conditional updates
 * ({@link BatchRewrap}), so no application write is ever overwritten.
 *
 * <p>One reader walks the collection ({@link BatchReader}); up to {@code parallel} workers rewrite
 * its batches, which are consecutive _id ranges (issue 30). Batches are finished in any order but
 * counted in _id order: the checkpoint ({@code fle_proxy.rewrap_state}: the last _id of the
 * batches done without a gap, their counts and listed _ids) only moves past a batch once every
 * batch before it is done, so a stopped run resumes after it and no document is counted twice.
 * The documents of batches finished past the checkpoint are examined again on resume and found
 * current. The KMS and the upstream are retried with backoff for up to {@code retrySeconds}; then
 * the run stops with its checkpoint.
 */
public final class Rewrap {
    /**
     * @param rate     documents per second at most (0: no limit)
     * @param parallel batches rewritten at once (each by its own thread and connection)
     */
    public record Options(int batch, double rate, boolean dryRun, boolean resume, double retrySeconds, int parallel) {
    }

    /** Stopped before the end: the KMS or the upstream did not come back in time. The checkpoint is saved. */
    public static final class Stopped extends RuntimeException {
        Stopped(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The outcome: counts over the whole collection (resumed runs included) and this run's time;
     * skipped fields in leftDocuments documents, and the listed categories' documents by _id, one
     * line per category (bounded: see {@link Listed}).
     */
    public record Result(long examined, long rewritten, String fields, long skipped, long leftDocuments,
                         List<String> listing, double seconds) {
    }

    private final MongoCollection<BsonDocument> collection;
    private final MongoCollection<BsonDocument> state;
    private final CollectionPolicy policy;
    private final Supplier<DocumentRewrap> keys;
    private final Options options;
    private final PrintStream err;
    private final boolean terminal;
    private final Retry retry;

    /**
     * @param keys the current ciphers; called once per batch (the key resolver's cache keeps it
     *             cheap), so a key refreshed, revoked or unreachable is seen within a batch
     */
    public Rewrap(MongoCollection<BsonDocument> collection, MongoCollection<BsonDocument> state, CollectionPolicy policy,
                  Supplier<DocumentRewrap> keys, Options options, PrintStream err, boolean terminal) {
        this.collection = collection;
        this.state = state;
        this.policy = policy;
        this.keys = keys;
        this.options = options;
        this.err = err;
        this.terminal = terminal;
        this.retry = new Retry(options.retrySeconds(), err);
    }

    public Result run() {
        long t0 = System.nanoTime();
        Counts counts = new Counts();
        BsonValue last = null;
        if (options.resume()) {
            BsonDocument saved = retry.run("reading the checkpoint", () -> state.find(new BsonDocument("_id",
                    new BsonString(policy.namespace()))).first());
            if (saved == null || saved.getBoolean("finished", BsonBoolean.FALSE).getValue()) {
                throw new IllegalStateException(saved == null ? "nothing to resume: no checkpoint for "
                        + policy.namespace() + " in fle_proxy.rewrap_state" : "nothing to resume: the run on "
                        + policy.namespace() + " finished at " + Instant.ofEpochMilli(saved.getDateTime("updatedAt")
                        .getValue()) + "; run without --resume to check the collection again");
            }
            counts = Counts.fromBson(saved.getDocument("counts"));
            last = saved.get("lastId");
            if (!saved.getString("key").getValue().equals(policy.keyId().toString())) {
                err.println("rewrap: the checkpoint was made for key " + saved.getString("key").getValue()
                        + ", the policy's key is now " + policy.keyId() + ": documents before the checkpoint are not "
                        + "checked again; run without --resume to check them all");
            }
            err.println("rewrap: resuming " + policy.namespace() + (last == null ? " from the start" : " after _id " + last)
                    + " ("
                    + String.format(Locale.ROOT, "%,d", counts.examined) + " documents done)");
        }
        long total = retry.run("counting documents", collection::estimatedDocumentCount);
        Progress progress = new Progress(err, terminal, "rewrap " + policy.namespace()
                + (options.dryRun() ? " (dry run)" : ""), total, counts.examined);
        Pace pace = new Pace(options.rate());
        BatchRewrap batches = new BatchRewrap(collection, options.dryRun(), retry, err);
        int parallel = options.parallel();
        ExecutorService workers = Executors.newFixedThreadPool(parallel, workerThreads());
        // batches under way, oldest first; a reader ahead of the workers by at most `parallel` batches
        Deque<Batch> underWay = new ArrayDeque<>();
        try (BatchReader reader = new BatchReader(collection, options.batch(), last)) {
            while (true) {
                List<BsonDocument> docs = retry.run("reading documents", reader::next);
                if (docs.isEmpty()) {
                    break;
                }
                pace.take(docs.size());
                underWay.add(new Batch(workers.submit(() -> batches.run(docs, retry.run("getting the keys", keys::get))),
                        docs.get(docs.size() - 1).get("_id")));
                while (underWay.size() >= 2 * parallel || (!underWay.isEmpty() && underWay.peek().done().isDone())) {
                    last = finish(underWay.poll(), counts, progress);
                }
            }
            while (!underWay.isEmpty()) {
                last = finish(underWay.poll(), counts, progress);
            }
        } finally {
            workers.shutdownNow();
            awaitQuietly(workers);
        }
        save(counts, last, true);
        progress.finish(counts.examined);
        return new Result(counts.examined, counts.rewritten, counts.describe(), counts.skipped(), counts.leftDocuments,
                counts.listing(), (System.nanoTime() - t0) / 1e9);
    }

    /** A batch given to a worker, and the _id it ends at. */
    private record Batch(Future<Counts> done, BsonValue lastId) {
    }

    /** Waits for the oldest batch, adds its counts and moves the checkpoint past it; its last _id. */
    private BsonValue finish(Batch batch, Counts counts, Progress progress) {
        Counts done;
        try {
            done = batch.done().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Stopped("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
        counts.add(done);
        save(counts, batch.lastId(), false);
        progress.update(counts.examined);
        return batch.lastId();
    }

    private static ThreadFactory workerThreads() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "rewrap-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Lets the workers of a stopped run notice (they are interrupted) before the run reports. */
    private static void awaitQuietly(ExecutorService workers) {
        try {
            workers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void save(Counts counts, BsonValue last, boolean finished) {
        if (options.dryRun()) {
            return;
        }
        BsonDocument doc = new BsonDocument("_id", new BsonString(policy.namespace()))
                .append("key", new BsonString(policy.keyId().toString()))
                .append("counts", counts.toBson())
                .append("finished", BsonBoolean.valueOf(finished))
                .append("updatedAt", new BsonDateTime(System.currentTimeMillis()));
        if (last != null) {
            doc.append("lastId", last);
        }
        retry.run("saving the checkpoint", () -> state.replaceOne(
                new BsonDocument("_id", doc.get("_id")), doc, new ReplaceOptions().upsert(true)));
    }

    /** Holds the run to at most rate documents per second (a batch at a time). */
    private static final class Pace {
        private final double rate;
        private final long start = System.nanoTime();
        private long done;

        Pace(double rate) {
            this.rate = rate;
        }

        /** Waits until n more documents are due. */
        void take(int n) {
            done += n;
            if (rate <= 0) {
                return;
            }
            long due = start + (long) (done / rate * 1e9);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
