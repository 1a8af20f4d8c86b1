package dev.fleproxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The audit line's bytes as the writer builds them: time stamps, numbers, hex, and a whole line's members. */
class LineBufferTest {
    private static String text(LineBuffer b) {
        return new String(b.array(), 0, b.length(), StandardCharsets.UTF_8);
    }

    @Test
    void timeStampsAreUtcWithMillisecondsEvenOnTheMinute() {
        LineBuffer b = new LineBuffer();
        String[][] cases = {{"2026-11-26T06:00:00Z", "2026-11-26T06:00:00.000Z"}, {"2026-11-26T06:27:30.805Z", "2026-11-26T06:27:30.805Z"},
                            {"2026-11-26T06:27:30.001Z", "2026-11-26T06:27:30.001Z"}, {"1999-12-31T23:59:59.999Z", "1999-12-31T23:59:59.999Z"},
                            {"2026-11-26T06:27:31.5Z", "2026-11-26T06:27:31.500Z"}, {"1969-12-31T23:59:59.250Z", "1969-12-31T23:59:59.250Z"}};
        for (String[] c : cases) {
            assertEquals(c[1], text(b.truncate(0).time(Instant.parse(c[0]).toEpochMilli())));
        }
    }

    @Test
    void numbersAndHexAsJsonWritesThem() {
        LineBuffer b = new LineBuffer();
        for (long n : new long[] {0, 7, 10, -1, 9_876_543_210L, Long.MAX_VALUE, Long.MIN_VALUE}) {
            assertEquals(Long.toString(n), text(b.truncate(0).number(n)));
        }
        assertEquals("00ff7f80", text(b.truncate(0).hex(new byte[] {0, -1, 127, -128, 5}, 4)));
    }

    @Test
    void anEventsMembersQuoteWhatTheyName() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("ssn", "masked:partial");
        fields.put("a\"b", "revealed");
        AuditEvent e = new AuditEvent(Instant.parse("2026-11-26T06:27:30.805Z").toEpochMilli(),
                AuditEvent.who(17, "support", "/10.0.0.7:37008"), AuditEvent.what("find", "bank.cust\u00f6mers", fields))
                .documents(2).code(0);
        LineBuffer b = new LineBuffer();
        e.appendMembers(b);
        assertEquals("\"t\":\"2026-11-26T06:27:30.805Z\",\"conn\":17,\"identity\":\"support\",\"client\":\"/10.0.0.7:37008\","
                + "\"cmd\":\"find\",\"ns\":\"bank.cust\u00f6mers\",\"fields\":{\"ssn\":\"masked:partial\",\"a\\\"b\":\"revealed\"},"
                + "\"docs\":2,\"code\":0", text(b));
    }

    @Test
    void growsPastItsFirstKilobyte() {
        LineBuffer b = new LineBuffer();
        byte[] k = new byte[700];
        b.bytes(k).bytes(k).ascii("x");
        assertEquals(1401, b.length());
    }
}
