package dev.fleproxy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class CommandLabelsTest {
    @Test
    void aClientCannotMakeNewLabels() {
        assertEquals("find", CommandLabels.of("find"));
        assertEquals("isMaster", CommandLabels.of("ismaster"));
        assertEquals("findAndModify", CommandLabels.of("findandmodify"));
        assertEquals("none", CommandLabels.of(null));
        assertEquals("none", CommandLabels.of(""));
        for (String made : List.of("x".repeat(1000), "find ", "FIND", "$where", "drop\u0000")) {
            assertEquals("other", CommandLabels.of(made));
        }
    }
}
