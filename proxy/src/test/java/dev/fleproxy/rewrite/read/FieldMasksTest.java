package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The partial mask: the last characters kept, letters and digits before them starred, separators kept. */
class FieldMasksTest {
    @Test
    void partialKeepsTheTailAndTheFormat() {
        assertEquals("***-**-6789", FieldMasks.partial("123-45-6789", 4));
        assertEquals("****", FieldMasks.partial("abcd", 0));
        assertEquals("ab", FieldMasks.partial("ab", 4));
        assertEquals("*** *****é", FieldMasks.partial("ann smithé", 1), "letters of any script, by code point");
        assertEquals("**@x.org", FieldMasks.partial("jo@x.org", 6));
    }
}
