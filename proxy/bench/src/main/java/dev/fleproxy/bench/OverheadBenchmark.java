package dev.fleproxy.bench;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.bson.Document;

/**
 * The proxy's cost on the simplest loop: N threads insert YCSB-sized documents (10 fields of
 * 100 bytes) for a fixed time, then read them back by _id, against each target in turn: the
 * upstream directly, the proxy on a collection without policy, and the proxy on collections
 * encrypted under each suite. Rounds alternate the order so that machine noise hits all alike.
 * Results are ratios from one run, never absolute promises.
 */
public final class OverheadBenchmark {
    public static final int FIELDS = 10;
    public static final int FIELD_LENGTH = 100;
    public static final String DATABASE = "bench";

    /**
     * Where one series of phases runs: a connection string and a collection of {@link #DATABASE}.
     * {@code encrypted}: the proxy's policy must encrypt this collection; the benchmark checks that
     * the upstream holds envelopes there, so a policy that is not in effect cannot pass for cheap crypto.
     */
    public record Target(String name, String uri, String collection, boolean encrypted) {
    }

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
     * Warms up every target (round 0, not reported: the JIT of the client, proxy and backend
     * JVMs), then runs rounds of (insert, read) per target, odd rounds in the given order, even
     * rounds reversed.
     *
     * @param directUri the upstream itself, for the encryption check
     */
    public List<Phase> run(List<Target> targets, String directUri, int rounds, double warmupSeconds)
            throws InterruptedException {
        List<Phase> phases = new ArrayList<>();
        Map<String, MongoClient> clients = new LinkedHashMap<>();
        try {
            MongoClient direct = clients.computeIfAbsent(directUri, OverheadBenchmark::client);
            for (Target t : targets) {
                clients.computeIfAbsent(t.uri(), OverheadBenchmark::client);
            }
            if (warmupSeconds > 0) {
                double each = warmupSeconds / 2 / targets.size();
                for (Target t : targets) {
                    target(t, clients.get(t.uri()), direct, 0, each, new ArrayList<>());
                }
            }
            for (int round = 1; round <= rounds; round++) {
                List<Target> order = new ArrayList<>(targets);
                if (round % 2 == 0) {
                    Collections.reverse(order);
                }
                for (Target t : order) {
                    target(t, clients.get(t.uri()), direct, round, seconds, phases);
                }
            }
        } finally {
            clients.values().forEach(MongoClient::close);
        }
        return phases;
    }

    /** Insert then read on one target. */
    private void target(Target t, MongoClient client, MongoClient direct, int round, double phaseSeconds,
                        List<Phase> phases) throws InterruptedException {
        MongoCollection<Document> coll = client.getDatabase(DATABASE).getCollection(t.collection());
        coll.drop();
        AtomicLong nextId = new AtomicLong();
        phases.add(timed(t.name(), "insert", round, phaseSeconds, () -> coll.insertOne(document(nextId.getAndIncrement()))));
        long inserted = nextId.get();
        checkStorage(t, direct);
        phases.add(timed(t.name(), "read", round, phaseSeconds, () -> {
            long id = ThreadLocalRandom.current().nextLong(inserted);
            Document d = coll.find(Filters.eq("_id", id)).first();
            if (d == null || !(d.get("field0") instanceof String)) {
                throw new IllegalStateException("document " + id + " missing or not decrypted: " + t.name());
            }
        }));
        coll.drop();
    }

    /** The upstream must hold envelopes (binary) in encrypted targets, strings in the others. */
    private static void checkStorage(Target t, MongoClient direct) {
        Document stored = direct.getDatabase(DATABASE).getCollection(t.collection()).find().first();
        Object field0 = stored == null ? null : stored.get("field0");
        boolean binary = field0 instanceof org.bson.types.Binary || field0 instanceof byte[];
        if (stored == null || binary != t.encrypted()) {
            throw new IllegalStateException(DATABASE + "." + t.collection() + " for " + t.name() + " should hold "
                    + (t.encrypted() ? "encrypted envelopes (is it in the proxy's policy?)" : "plain strings")
                    + " but holds " + (stored == null ? "nothing" : field0 == null ? "no field0" : field0.getClass().getSimpleName()));
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
