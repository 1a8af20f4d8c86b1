package dev.fleproxy.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Exact percentiles over all of a phase's threads (nearest rank), in ms. */
class LatenciesTest {
    @Test
    void percentilesPoolEveryThreadsLatencies() {
        Latencies a = new Latencies();
        Latencies b = new Latencies();
        for (int i = 1; i <= 10_000; i++) { // 1..10,000 µs, split over two threads, more than one array's worth
            (i % 2 == 0 ? a : b).add(i * 1000L);
        }
        assertArrayEquals(new double[] {5.0, 9.9, 10.0}, Latencies.percentilesMs(List.of(a, b), 0.5, 0.99, 1.0), 1e-9);
        assertTrue(Double.isNaN(Latencies.percentilesMs(List.of(new Latencies()), 0.5)[0]));
    }
}
