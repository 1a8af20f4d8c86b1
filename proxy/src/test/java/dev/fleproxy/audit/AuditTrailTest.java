package dev.fleproxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.crypto.ChainMac;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The chained trail: written, rotated, resumed after a restart, and every tampering found by line. */
class AuditTrailTest {
    private static final DataKey KEY = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, new byte[32]);

    @TempDir
    Path dir;

    private static AuditEvent event(int i) {
        return new AuditEvent(Instant.parse("2026-11-26T06:00:00Z").toEpochMilli(), AuditEvent.who(i, "support", "/127.0.0.1:5000"),
                AuditEvent.what("find", "acc.\"people\"", Map.of("ssn", "masked:partial"))).documents(i % 3);
    }

    private List<Path> write(int events, long rotateBytes) {
        Path file = dir.resolve("audit.log");
        try (AuditLog log = new AuditLog(file, ChainMac.of(KEY), rotateBytes, Duration.ZERO, 100_000,
                AuditLog.OnFull.REFUSE, false)) {
            for (int i = 0; i < events; i++) {
                log.write(event(i));
            }
        }
        return files(file);
    }

    private static List<Path> files(Path file) {
        try {
            List<Path> all = new ArrayList<>(AuditFiles.rotated(file));
            all.add(file);
            return all;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static AuditVerifier.Result verify(List<Path> files) throws IOException {
        return AuditVerifier.verify(files, ChainMac.of(KEY));
    }

    @Test
    void aTrailRotatedTwiceAndResumedAfterARestartVerifies() throws IOException {
        List<Path> files = write(300, 20_000);
        assertTrue(files.size() >= 3, "rotated at least twice: " + files);
        write(50, 20_000); // a restart: the chain goes on from the newest file
        AuditVerifier.Result r = verify(files(dir.resolve("audit.log")));
        assertTrue(r.ok(), r.problem());
        assertEquals(350, r.lines());
        String first = Files.readAllLines(files.get(0)).get(0);
        assertTrue(first.startsWith("{\"seq\":1,\"t\":\"2026-11-26T06:00:00.000Z\",\"conn\":0,\"identity\":\"support\","), first);
        assertTrue(first.contains("\"ns\":\"acc.\\\"people\\\"\",\"fields\":{\"ssn\":\"masked:partial\"},\"docs\":0,\"code\":0,\"mac\":\""),
                first);
    }

    @Test
    void aRemovedAChangedAndAnInsertedLineAreEachFoundByLine() throws IOException {
        List<Path> files = write(40, Long.MAX_VALUE);
        Path log = files.get(files.size() - 1);
        List<String> lines = Files.readAllLines(log);

        List<String> removed = new ArrayList<>(lines);
        removed.remove(9);
        assertBroken(log, removed, "line 10: its number is 11 where 10 was due");

        List<String> changed = new ArrayList<>(lines);
        changed.set(4, changed.get(4).replace("\"docs\":1", "\"docs\":9"));
        assertBroken(log, changed, "line 5: its MAC does not match");

        List<String> inserted = new ArrayList<>(lines);
        inserted.add(20, lines.get(20)); // a copy of a genuine line: its MAC chains to the wrong line
        assertBroken(log, inserted, "line 22: its number is 21 where 22 was due");

        List<String> forged = new ArrayList<>(lines);
        forged.add(7, "{\"seq\":8,\"t\":\"x\",\"mac\":\"" + "0".repeat(64) + "\"}");
        assertBroken(log, forged, "line 8: its MAC does not match");
    }

    private void assertBroken(Path log, List<String> lines, String expected) throws IOException {
        Path copy = dir.resolve("tampered.log");
        Files.write(copy, lines, StandardCharsets.UTF_8);
        AuditVerifier.Result r = verify(List.of(copy));
        assertFalse(r.ok());
        assertTrue(r.problem().contains(expected), r.problem());
    }

    @Test
    void withDropAFullQueueDropsAndCountsWithRefuseItRefuses() {
        AuditLog refuse = new AuditLog(dir.resolve("r.log"), ChainMac.of(KEY), Long.MAX_VALUE, Duration.ZERO, 1,
                AuditLog.OnFull.REFUSE, false);
        assertTrue(refuse.admits());
        refuse.close();
        assertEquals("\"a\\\"b\\\\c\\u0001\"", AuditLine.quote("a\"b\\c\u0001"));
    }

    private AuditLog named(String file, String instance) {
        return new AuditLog(dir.resolve(file), ChainMac.of(KEY), 20_000, Duration.ZERO, 100_000,
                AuditLog.OnFull.REFUSE, false, null, false, instance);
    }

    private void writeNamed(String file, String instance, int events) {
        try (AuditLog log = named(file, instance)) {
            for (int i = 0; i < events; i++) {
                log.write(event(i));
            }
        }
    }

    @Test
    void everyLineNamesItsInstanceAndSeveralInstancesTrailsVerifyAsAChainEach() throws IOException {
        writeNamed("a.log", null, 5); // written before lines named their instance: the upgrade's first lines
        writeNamed("a.log", "proxy-a", 200);
        writeNamed("b.log", "proxy-b", 120);
        String line = Files.readAllLines(dir.resolve("a.log")).get(0);
        assertTrue(line.contains("\"code\":0,\"instance\":\"proxy-a\",\"mac\":\""), line);
        assertEquals("proxy-a", AuditLine.instance(AuditLine.parse(line).covered()));
        List<Path> all = new ArrayList<>();
        List<Path> a = files(dir.resolve("a.log"));
        List<Path> b = files(dir.resolve("b.log"));
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) { // interleaved: the order among instances does not matter
            if (i < b.size()) {
                all.add(b.get(i));
            }
            if (i < a.size()) {
                all.add(a.get(i));
            }
        }
        assertTrue(a.size() >= 2 && b.size() >= 2, "rotated: " + a + " " + b);
        List<AuditVerifier.Checked> chains = AuditVerifier.verifyChains(all, ChainMac.of(KEY));
        assertEquals(List.of("proxy-b", "proxy-a"), chains.stream().map(AuditVerifier.Checked::instance).toList());
        assertTrue(chains.get(0).result().ok(), chains.get(0).result().problem());
        assertEquals(120, chains.get(0).result().lines());
        assertTrue(chains.get(1).result().ok(), chains.get(1).result().problem());
        assertEquals(205, chains.get(1).result().lines(), "the unnamed lines first, in proxy-a's chain");
        assertFalse(AuditVerifier.verify(all, ChainMac.of(KEY)).ok(), "two chains are not one");
    }

    @Test
    void aTrailIsWrittenByOneInstanceOnly() {
        writeNamed("a.log", "proxy-a", 3);
        IllegalStateException other = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> named("a.log", "proxy-b"));
        assertTrue(other.getMessage().contains("is the trail of instance proxy-a, and this proxy is proxy-b"),
                other.getMessage());
        try (AuditLog open = named("a.log", "proxy-a")) {
            IllegalStateException locked = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> named("a.log", "proxy-a"));
            assertTrue(locked.getMessage().contains("is being written by another process"), locked.getMessage());
            open.write(event(1));
        }
        try (AuditLog again = named("a.log", "proxy-a")) { // the lock goes with the log that held it
            again.write(event(2));
        }
    }
}
