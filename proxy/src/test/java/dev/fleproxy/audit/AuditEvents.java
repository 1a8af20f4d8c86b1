package dev.fleproxy.audit;

import java.time.Instant;
import java.util.Map;

/** The events the trail's tests write: a find by support on conn {@code i}, its ssn masked. */
final class AuditEvents {
    private AuditEvents() {
    }

    static AuditEvent find(int i) {
        return new AuditEvent(Instant.parse("2026-11-26T06:00:00Z").toEpochMilli(), AuditEvent.who(i, "support", "/127.0.0.1:5000"),
                AuditEvent.what("find", "acc.people", Map.of("ssn", "masked:partial"))).documents(1);
    }
}
