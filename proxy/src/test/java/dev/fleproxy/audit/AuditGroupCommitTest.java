package dev.fleproxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fleproxy.crypto.ChainMac;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** No answer before its line: an event's completion comes after its line is on file, and fails if it cannot be. */
class AuditGroupCommitTest {
    private static final DataKey KEY = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, new byte[32]);

    @TempDir
    Path dir;

    private static AuditEvent event(int i) {
        return AuditEvents.find(i);
    }

    private static AuditLog open(Path file) {
        return new AuditLog(file, ChainMac.of(KEY), Long.MAX_VALUE, Duration.ZERO, 100_000, AuditLog.OnFull.REFUSE, false);
    }

    @Test
    void eachCompletionComesOnlyOnceItsLineIsOnFile() throws Exception {
        Path file = dir.resolve("audit.log");
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> all = new ArrayList<>();
        try (AuditLog log = open(file)) {
            for (int i = 0; i < 2000; i++) {
                int seq = i + 1;
                AuditEvent e = event(i);
                CompletionStage<Void> written = log.write(e);
                // the writer completes it: at that moment the file must already hold its whole line
                all.add(written.thenRun(() -> {
                    try {
                        String text = Files.readString(file, StandardCharsets.UTF_8);
                        int at = text.indexOf("{\"seq\":" + seq + ",");
                        if (at < 0 || text.indexOf('\n', at) < 0) {
                            problems.add("seq " + seq + " released before its whole line was on file");
                        }
                    } catch (IOException x) {
                        problems.add(x.toString());
                    }
                }).toCompletableFuture());
                assertTrue(log.write(e) == written, "handed over once: the same completion again, no second line");
                if (i % 300 == 0) {
                    Thread.sleep(5); // let the writer sleep in between: a line must wake it
                }
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            assertEquals(2000, log.written());
        }
        assertEquals(List.of(), problems);
        assertEquals(2000, Files.readAllLines(file).size());
        assertTrue(AuditVerifier.verify(List.of(file), ChainMac.of(KEY)).ok());
    }

    @Test
    void aLoneLineIsWrittenAtOnceNotAtTheNextTick() throws Exception {
        try (AuditLog log = open(dir.resolve("audit.log"))) {
            Thread.sleep(200); // the writer is asleep
            long t0 = System.nanoTime();
            log.write(event(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(millis < 80, "a line woke the writer: released after " + millis + " ms");
        }
    }

    @Test
    void aWriteThatFailsFailsTheWaitingCompletionsAndEveryLaterOne() throws Exception {
        Path full = Path.of("/dev/full"); // every write to it fails with ENOSPC, as on a full disk
        assumeTrue(Files.isWritable(full), "needs Linux's /dev/full");
        Path file = Files.createSymbolicLink(dir.resolve("audit.log"), full);
        try (AuditLog log = open(file)) {
            assertTrue(log.admits());
            List<CompletableFuture<Void>> waiting = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                waiting.add(log.write(event(i)).toCompletableFuture());
            }
            for (CompletableFuture<Void> w : waiting) {
                ExecutionException x = assertThrows(ExecutionException.class, () -> w.get(10, TimeUnit.SECONDS));
                assertTrue(x.getCause() instanceof IOException, x.toString());
            }
            assertTrue(log.failed());
            assertFalse(log.admits(), "requests refused from now on");
            assertEquals(0, log.written());
            AuditEvent late = event(99);
            assertTrue(log.write(late).toCompletableFuture().isCompletedExceptionally(), "failed at once");
            assertFalse(late.onFile());
        }
    }

    @Test
    void withDropAnEventPastTheCapacityIsDroppedAndHoldsNothing() throws Exception {
        try (AuditLog log = new AuditLog(dir.resolve("d.log"), ChainMac.of(KEY), Long.MAX_VALUE, Duration.ZERO, 1,
                AuditLog.OnFull.DROP, false)) {
            int dropped = 0;
            for (int i = 0; i < 2000; i++) {
                AuditEvent e = event(i);
                CompletionStage<Void> c = log.write(e);
                if (e.dropped()) {
                    dropped++;
                    assertTrue(c.toCompletableFuture().isDone() && e.onFile(), "a dropped line holds no answer");
                }
            }
            assertEquals(dropped, log.dropped());
        }
    }
}
