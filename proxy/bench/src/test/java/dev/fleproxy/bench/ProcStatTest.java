package dev.fleproxy.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ProcStatTest {
    /** Fields 3.. of a real line (a JVM's), utime = 1525 and stime = 311. */
    private static final String REST = " S 1 4242 4242 0 -1 4194560 61923 0 12 0 1525 311 0 0 20 0 41 0 2087 "
            + "9013428224 53219 18446744073709551615 1 1 0 0 0 0 0 4096 16796879 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    @Test
    void utimePlusStimeOfAPlainName() {
        assertEquals(1525 + 311, ProcStat.cpuTicks("4243 (java)" + REST));
    }

    @Test
    void aNameWithSpacesAndParenthesesDoesNotShiftTheFields() {
        assertEquals(1836, ProcStat.cpuTicks("4243 (my (odd) name) 7 8)" + REST));
        assertEquals(1836, ProcStat.cpuTicks("4243 ( ) ) ( )" + REST));
        assertEquals(1836, ProcStat.cpuTicks("4243 (1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)" + REST));
    }

    @Test
    void somethingElseIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> ProcStat.cpuTicks("4243 java S 1 2 3"));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.cpuTicks("4243 (java) S 1 2 3"));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.cpuTicks("4243 (java) S 1 4242 4242 0 -1 4194560 "
                + "61923 0 12 0 x 311 0 0 20"));
    }

    @Test
    void thisProcessHasCpuTimeAndAGoneOneIsNamed() {
        long busy = 0;
        for (int i = 0; i < 2_000_000; i++) {
            busy += Integer.toString(i).hashCode();
        }
        assertTrue(ProcStat.cpuTicks(ProcessHandle.current().pid()) > 0 || busy == 42);
        assertTrue(ProcStat.clkTck() > 0);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProcStat.cpuTicks(Integer.MAX_VALUE));
        assertTrue(e.getMessage().contains("is gone"), e.getMessage());
    }

    @Test
    void compilerThreadsAreToldByTheirNames() {
        assertTrue(ProcStat.isCompilerThread("4250 (C2 CompilerThre)" + REST));
        assertTrue(ProcStat.isCompilerThread("4251 (C1 CompilerThre)" + REST));
        assertFalse(ProcStat.isCompilerThread("4252 (multiThreadIoEv)" + REST));
        assertFalse(ProcStat.isCompilerThread("4253 (GC Thread#0)" + REST));
    }

    @Test
    void thisJvmsCompilersAreAPartOfItsCpu() {
        long pid = ProcessHandle.current().pid();
        long jit = ProcStat.jitTicks(pid);
        assertTrue(jit >= 0 && jit <= ProcStat.cpuTicks(pid), jit + " ticks");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProcStat.jitTicks(Integer.MAX_VALUE));
        assertTrue(e.getMessage().contains("is gone"), e.getMessage());
    }
}
