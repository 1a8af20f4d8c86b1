package dev.fleproxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.crypto.ChainMac;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A line cut short (the process stopped, or the disk filled, mid-write): the next start keeps the
 * fragment, records the cut in the chain and goes on; the verifier passes it only with a matching
 * record, and names it. And the verifier checks every byte: a '\r', invalid UTF-8, an upper-case MAC.
 */
class AuditCutTest {
    private static final DataKey KEY = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, new byte[32]);

    @TempDir
    Path dir;

    private static AuditEvent event(int i) {
        return AuditEvents.find(i);
    }

    private void write(Path file, int events, long rotateBytes) {
        try (AuditLog log = new AuditLog(file, ChainMac.of(KEY), rotateBytes, Duration.ZERO, 100_000,
                AuditLog.OnFull.REFUSE, false)) {
            for (int i = 0; i < events; i++) {
                log.write(event(i));
            }
        }
    }

    private static AuditVerifier.Result verify(Path... files) throws IOException {
        return AuditVerifier.verify(List.of(files), ChainMac.of(KEY));
    }

    private static final byte[] FRAGMENT = "{\"seq\":11,\"t\":\"2026-11-26T06:00:00.000Z\",\"co"
            .getBytes(StandardCharsets.UTF_8);

    @Test
    void aLineCutShortIsKeptRecordedAndNamedByVerify() throws IOException {
        Path file = dir.resolve("audit.log");
        write(file, 10, Long.MAX_VALUE);
        Files.write(file, FRAGMENT, StandardOpenOption.APPEND); // the process died mid-line
        write(file, 5, Long.MAX_VALUE); // starts anyway, and goes on
        List<String> lines = Files.readAllLines(file);
        assertEquals(17, lines.size());
        assertEquals(new String(FRAGMENT, StandardCharsets.UTF_8), lines.get(10), "the fragment's bytes are kept");
        assertTrue(lines.get(11).matches("\\{\"seq\":11,\"t\":\"[^\"]+\",\"event\":\"cut\",\"file\":\"audit.log\","
                + "\"line\":11,\"bytes\":" + FRAGMENT.length + ",\"sha256\":\"[0-9a-f]{64}\",\"mac\":\"[0-9a-f]{64}\"}"),
                lines.get(11));
        assertTrue(lines.get(12).startsWith("{\"seq\":12,"), lines.get(12));
        AuditVerifier.Result r = verify(file);
        assertTrue(r.ok(), r.problem());
        assertEquals(16, r.lines());
        assertEquals(List.of(file + " line 11 (" + FRAGMENT.length + " bytes), recorded at seq 11"), r.cuts());

        // the fragment changed: its recorded hash no longer matches
        List<String> changed = new ArrayList<>(lines);
        changed.set(10, changed.get(10).replace("co", "cx"));
        assertBroken(changed, "line 11: its cut record (line 12) does not describe it");
        // the cut record removed: the fragment is no audit line
        List<String> noRecord = new ArrayList<>(lines);
        noRecord.remove(11);
        assertBroken(noRecord, "line 11: not an audit line");
        // the fragment removed: the record names a line that is not the fragment
        List<String> noFragment = new ArrayList<>(lines);
        noFragment.remove(10);
        assertBroken(noFragment, "line 10: its cut record (line 11) does not describe it");
    }

    @Test
    void aFragmentWithNoRecordAfterItFailsVerify() throws IOException {
        Path file = dir.resolve("audit.log");
        write(file, 10, Long.MAX_VALUE);
        Files.write(file, FRAGMENT, StandardOpenOption.APPEND);
        AuditVerifier.Result r = verify(file);
        assertFalse(r.ok());
        assertTrue(r.problem().contains("line 11: cut short (no newline at its end), and no cut record follows it"),
                r.problem());
        assertEquals(10, r.lines());
    }

    @Test
    void aNewFileCutInItsFirstLineGoesOnFromTheFileBefore() throws IOException {
        Path file = dir.resolve("audit.log");
        write(file, 200, 20_000);
        List<Path> rotated = AuditFiles.rotated(file);
        assertTrue(rotated.size() >= 2, rotated.toString());
        Files.move(file, AuditFiles.rotatedName(file, rotated.size() + 1)); // as a rotation leaves it
        Files.write(file, FRAGMENT); // the new file's first write was cut
        write(file, 3, 20_000);
        List<Path> all = new ArrayList<>(AuditFiles.rotated(file));
        all.add(file);
        AuditVerifier.Result r = verify(all.toArray(Path[]::new));
        assertTrue(r.ok(), r.problem());
        assertEquals(204, r.lines());
        assertEquals(List.of(file + " line 1 (" + FRAGMENT.length + " bytes), recorded at seq 201"), r.cuts());
    }

    @Test
    void aTrailWhoseLastWholeLineIsNoAuditLineDoesNotStartSayingWhichFile() throws IOException {
        Path file = dir.resolve("audit.log");
        write(file, 3, Long.MAX_VALUE);
        Files.writeString(file, "garbage\n", StandardOpenOption.APPEND);
        IllegalStateException x = assertThrows(IllegalStateException.class, () -> write(file, 1, Long.MAX_VALUE));
        assertTrue(x.getMessage().startsWith(file.toAbsolutePath() + " ends in a line that is not an audit line"),
                x.getMessage());
        assertFalse(x.getMessage().contains("\n"));
    }

    @Test
    void everyByteCountsACarriageReturnInvalidUtf8OrAnUpperCaseMacFail() throws IOException {
        Path file = dir.resolve("audit.log");
        write(file, 10, Long.MAX_VALUE);
        byte[] original = Files.readAllBytes(file);
        assertTrue(verify(file).ok());

        int endOfThird = nthNewline(original, 3);
        assertBroken(insert(original, endOfThird, (byte) '\r'), "line 3: not an audit line (no seq or mac; it holds a carriage return)");
        assertBroken(insert(original, original.length - 1, (byte) '\r'), "line 10: not an audit line");

        byte[] latin = original.clone();
        int at = indexOf(original, "support".getBytes(StandardCharsets.US_ASCII), nthNewline(original, 4));
        latin[at] = (byte) 0xff;
        assertBroken(latin, "line 5: not UTF-8");

        byte[] upper = original.clone();
        int macAt = indexOf(original, "\"mac\":\"".getBytes(StandardCharsets.US_ASCII), nthNewline(original, 6)) + 7;
        for (int i = macAt; i < macAt + 64; i++) {
            upper[i] = (byte) Character.toUpperCase((char) upper[i]);
        }
        assertBroken(upper, "line 7: not an audit line");
    }

    private void assertBroken(List<String> lines, String expected) throws IOException {
        assertBroken((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8), expected);
    }

    private void assertBroken(byte[] bytes, String expected) throws IOException {
        Path copy = dir.resolve("tampered.log");
        Files.write(copy, bytes);
        AuditVerifier.Result r = verify(copy);
        assertFalse(r.ok(), expected);
        assertTrue(r.problem().contains(expected), r.problem());
    }

    private static int nthNewline(byte[] b, int n) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] == '\n' && --n == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException();
    }

    private static int indexOf(byte[] b, byte[] what, int from) {
        for (int i = from; i <= b.length - what.length; i++) {
            if (Arrays.equals(b, i, i + what.length, what, 0, what.length)) {
                return i;
            }
        }
        throw new IllegalArgumentException();
    }

    private static byte[] insert(byte[] b, int at, byte x) {
        byte[] out = new byte[b.length + 1];
        System.arraycopy(b, 0, out, 0, at);
        out[at] = x;
        System.arraycopy(b, at, out, at + 1, b.length - at);
        return out;
    }
}
