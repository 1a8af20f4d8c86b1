package dev.fleproxy.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllocationProbeTest {
    private static Instant at(double s) {
        return Instant.ofEpochSecond(1000).plusNanos((long) (s * 1e9));
    }

    @Test
    void sampledSumsTheWindowButNeverAThreadsFirstSample() {
        List<AllocationProbe.Sample> samples = List.of(
                new AllocationProbe.Sample(1, at(0.5), 9_000_000_000L),  // thread 1's first: its whole past, left out
                new AllocationProbe.Sample(1, at(1.5), 100),
                new AllocationProbe.Sample(1, at(2.5), 200),
                new AllocationProbe.Sample(2, at(1.2), 7_000_000_000L),  // thread 2's first falls in the window: left out too
                new AllocationProbe.Sample(2, at(1.8), 300),
                new AllocationProbe.Sample(2, at(3.5), 400));            // after the window
        AllocationProbe.Sampled s = AllocationProbe.sampled(samples, at(1), at(3));
        assertEquals(600, s.bytes());
        assertEquals(3, s.samples());
    }

    @Test
    void exactTakesLastMinusFirstPerThreadOverTheirSpan() {
        List<AllocationProbe.ThreadSample> stats = List.of(
                new AllocationProbe.ThreadSample(1, at(3), 5_000),
                new AllocationProbe.ThreadSample(1, at(1), 1_000),
                new AllocationProbe.ThreadSample(1, at(2), 2_000),
                new AllocationProbe.ThreadSample(2, at(1), 10_000),
                new AllocationProbe.ThreadSample(2, at(3), 12_000),
                new AllocationProbe.ThreadSample(3, at(2), 99_999));  // seen once: adds nothing
        AllocationProbe.Exact e = AllocationProbe.exact(stats);
        assertEquals(4_000 + 2_000, e.bytes());
        assertEquals(2.0, e.spanSeconds(), 1e-9);
    }

    @Test
    void perOperationFiguresOfAPhase() {
        OverheadBenchmark.Phase p = new OverheadBenchmark.Phase("t", "read", 0, true, false, 4_000, 4.0, 1, 10, at(0), at(4));
        AllocationProbe.Events events = new AllocationProbe.Events(
                List.of(new AllocationProbe.Sample(1, at(0.1), 1), new AllocationProbe.Sample(1, at(2), 800_000)),
                List.of(new AllocationProbe.ThreadSample(1, at(0.5), 0), new AllocationProbe.ThreadSample(1, at(3.5), 600_000)));
        AllocationProbe.Allocation a = AllocationProbe.analyse(events, List.of(p)).get(0);
        assertEquals(200, a.sampledBytesPerOp(), 1e-9);    // 800,000 bytes / 4,000 ops
        assertEquals(200, a.exactBytesPerOp(), 1e-9);      // 600,000 bytes over 3 s at 1,000 ops/s
        assertEquals(1, a.samples());
    }
}
