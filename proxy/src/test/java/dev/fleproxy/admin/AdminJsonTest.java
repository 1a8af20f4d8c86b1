package dev.fleproxy.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The JSON the admin endpoints write by hand (no JSON library for three small bodies). */
class AdminJsonTest {
    @Test
    void problemsAreJsonStrings() {
        assertEquals("[]", AdminServer.jsonArray(List.of()));
        assertEquals("[\"a \\\"b\\\" \\\\ c\\n\\u0001\", \"d\"]", AdminServer.jsonArray(List.of("a \"b\" \\ c\n\u0001", "d")));
    }
}
