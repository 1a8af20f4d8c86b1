package dev.fleproxy.bench;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.bson.Document;

/**
 * The proxy's cost on the simplest loop: N threads insert YCSB-sized documents (10 fields of
 * 100 bytes) for a fixed time, then read them back by _id, once against the upstream directly
 * and once through the proxy, alternating so that machine noise hits both alike. Results are
 * ratios from one run, never absolute promises.
 */
public final class OverheadBenchmark {
    public static final int FIELDS = 10;
    public static final int FIELD_LENGTH = 100;

    /** One timed phase against one target. */
    public record Phase(String target, String operation, int round, long ops, double seconds, double meanLatencyMs) {
        public double opsPerSecond() {
            return ops / seconds;
        }
    }

    private final int threads;
    private final double seconds;

    public OverheadBenchmark(int threads, double seconds) {
        this.threads = threads;
        this.seconds = seconds;
    }

    /**
     * Warms up both targets (round 0, not reported: the JIT of the client, proxy and backend
     * JVMs), then runs rounds of (insert, read) in the order direct, proxy, proxy, direct, …
     */
    public List<Phase> run(String directUri, String proxyUri, int rounds, double warmupSeconds)
            throws InterruptedException {
        List<Phase> phases = new ArrayList<>();
        try (MongoClient direct = client(directUri); MongoClient proxy = client(proxyUri)) {
            if (warmupSeconds > 0) {
                round(direct, proxy, 0, warmupSeconds / 4, new ArrayList<>());
            }
            for (int round = 1; round <= rounds; round++) {
                round(direct, proxy, round, seconds, phases);
            }
        }
        return phases;
    }

    /** Insert then read on each target; odd rounds start with direct, even ones with the proxy. */
    private void round(MongoClient direct, MongoClient proxy, int round, double phaseSeconds, List<Phase> phases)
            throws InterruptedException {
        boolean directFirst = round % 2 == 1;
        for (int i = 0; i < 2; i++) {
            boolean isDirect = (i == 0) == directFirst;
            String target = isDirect ? "direct" : "proxy";
            MongoCollection<Document> coll = (isDirect ? direct : proxy).getDatabase("bench")
                    .getCollection("overhead_" + target + "_" + round);
            coll.drop();
            AtomicLong nextId = new AtomicLong();
            phases.add(timed(target, "insert", round, phaseSeconds, () -> coll.insertOne(document(nextId.getAndIncrement()))));
            long inserted = nextId.get();
            phases.add(timed(target, "read", round, phaseSeconds, () -> {
                long id = ThreadLocalRandom.current().nextLong(inserted);
                if (coll.find(Filters.eq("_id", id)).first() == null) {
                    throw new IllegalStateException("document " + id + " missing");
                }
            }));
            coll.drop();
        }
    }

    private static MongoClient client(String uri) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToConnectionPoolSettings(p -> p.maxSize(100))
                .build());
    }

    static Document document(long id) {
        Document d = new Document("_id", id);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int f = 0; f < FIELDS; f++) {
            char[] value = new char[FIELD_LENGTH];
            for (int i = 0; i < value.length; i++) {
                value[i] = (char) ('a' + r.nextInt(26));
            }
            d.append("field" + f, new String(value));
        }
        return d;
    }

    private interface Op {
        void run();
    }

    private Phase timed(String target, String operation, int round, double phaseSeconds, Op op)
            throws InterruptedException {
        LongAdder ops = new LongAdder();
        LongAdder nanos = new LongAdder();
        AtomicLong failure = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        long durationNanos = (long) (phaseSeconds * 1e9);
        List<Thread> workers = new ArrayList<>();
        long[] began = new long[1];
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                    while (System.nanoTime() - began[0] < durationNanos) {
                        long t0 = System.nanoTime();
                        op.run();
                        nanos.add(System.nanoTime() - t0);
                        ops.increment();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    failure.incrementAndGet();
                    throw e;
                }
            }, "bench-" + target + "-" + t);
            workers.add(w);
            w.start();
        }
        began[0] = System.nanoTime();
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - began[0]) / 1e9;
        if (failure.get() > 0) {
            throw new IllegalStateException(failure.get() + " worker(s) failed during " + operation + " on " + target);
        }
        long n = ops.sum();
        return new Phase(target, operation, round, n, elapsed, n == 0 ? 0 : nanos.sum() / 1e6 / n);
    }
}
