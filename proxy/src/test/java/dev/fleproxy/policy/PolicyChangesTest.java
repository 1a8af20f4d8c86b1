package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A reload's log line names what changed, a few collections per kind, never the whole policy. */
class PolicyChangesTest {
    private static final UUID K1 = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static final UUID K2 = UUID.fromString("00000000-0000-0000-0000-000000000002");

    private static CollectionPolicy collection(String ns, UUID key, boolean plaintextReads) {
        return new CollectionPolicy(ns, key, List.of(), null, true, Map.of(), (byte) 6, plaintextReads);
    }

    private static Policy policy(CollectionPolicy... cps) {
        Map<String, CollectionPolicy> m = new LinkedHashMap<>();
        for (CollectionPolicy cp : cps) {
            m.put(cp.namespace(), cp);
        }
        return new Policy(m);
    }

    @Test
    void namesWhatWasAddedRotatedChangedAndRemoved() {
        Policy before = policy(collection("a.same", K1, false), collection("a.rotated", K1, false),
                collection("a.changed", K1, false), collection("a.gone", K1, false));
        Policy after = policy(collection("a.same", K1, false), collection("a.rotated", K2, false),
                collection("a.changed", K1, true), collection("a.new", K1, false));
        assertEquals("1 collection(s) added [a.new]; 1 collection(s) with a new key [a.rotated]; "
                + "1 collection(s) with other settings changed [a.changed]; 1 collection(s) removed [a.gone]",
                PolicyChanges.between(before, after));
        assertEquals("no change", PolicyChanges.between(before, before));
    }

    @Test
    void tenThousandCollectionsAddedMakeAShortLine() {
        Map<String, CollectionPolicy> many = new LinkedHashMap<>();
        for (int i = 0; i < 10_000; i++) {
            many.put("db.c" + i, collection("db.c" + i, K1, false));
        }
        String line = PolicyChanges.between(Policy.EMPTY, new Policy(many));
        assertTrue(line.startsWith("10000 collection(s) added [db.c0, db.c1, db.c10, db.c100, db.c1000,"), line);
        assertTrue(line.endsWith(" and 9990 more"), line);
        assertTrue(line.length() < 200, line);
    }
}
