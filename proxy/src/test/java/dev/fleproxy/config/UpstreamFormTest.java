package dev.fleproxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The three forms of upstream: and what is refused, with where and why. */
class UpstreamFormTest {
    private static final HostPort A = new HostPort("a", 27017);
    private static final HostPort B = new HostPort("b", 27018);

    @Test
    void oneServerSeveralMongosAndAReplicaSet() {
        UpstreamForm one = UpstreamForm.parse("a:27017", "upstream");
        assertEquals(List.of(A), one.addresses());
        assertFalse(one.isReplicaSet());
        assertEquals("a:27017", one.describe());

        UpstreamForm mongos = UpstreamForm.parse("a:27017, b:27018", "upstream");
        assertEquals(List.of(A, B), mongos.addresses());
        assertEquals("mongos a:27017,b:27018", mongos.describe());
        assertEquals(mongos, UpstreamForm.parse(List.of("a:27017", "b:27018"), "upstream"), "a YAML list is the same");

        UpstreamForm rs = UpstreamForm.parse("mongodb://a:27017,b:27018/?replicaSet=rs0&heartbeatFrequencyMS=250"
                + "&serverSelectionTimeoutMS=3000", "upstream");
        assertEquals(List.of(A, B), rs.addresses());
        assertEquals("rs0", rs.replicaSet());
        assertEquals(250, rs.heartbeatMs());
        assertEquals(3000, rs.selectionTimeoutMs());
        assertEquals("replica set rs0 (a:27017,b:27018)", rs.describe());
        assertEquals(UpstreamForm.DEFAULT_HEARTBEAT_MS, UpstreamForm.parse("mongodb://a:27017/?replicaSet=x", "u").heartbeatMs());
        UpstreamForm plain = UpstreamForm.parse("mongodb://a:27017", "upstream");
        assertNull(plain.replicaSet(), "one host without replicaSet: that server");
    }

    @Test
    void whatCannotBeFollowedIsRefusedWithWhereAndWhy() {
        assertRefused("mongodb://a:1,b:2/", "p.yaml: upstream: several hosts in a mongodb:// string need ?replicaSet=NAME");
        assertRefused("mongodb://u:secret@a:1/?replicaSet=rs0", "no credentials here");
        assertRefused("mongodb://a:1/?replicaSet=rs0&readPreference=secondary", "option readPreference is not one the proxy reads");
        assertRefused("mongodb://a:1/db?replicaSet=rs0", "a database (/db) means nothing here");
        assertRefused("mongodb://a:1/?replicaSet=rs0&heartbeatFrequencyMS=5", "heartbeatFrequencyMS must be an integer 100-3600000");
        assertRefused("mongodb://a:1/?replicaSet=", "replicaSet is empty");
        assertRefused("mongodb+srv://c.example.com/", "mongodb+srv:// needs SRV and TXT lookups");
        assertRefused("a:1,b:x", "'b:x' has a non-numeric port");
        assertRefused("a:1,a:1", "lists a:1 twice");
        assertTrue(assertThrows(ConfigException.class, () -> UpstreamForm.parse(List.of(), "p.yaml: upstream"))
                .getMessage().contains("lists no address"));
    }

    private static void assertRefused(String text, String why) {
        String e = assertThrows(ConfigException.class, () -> UpstreamForm.parse(text, "p.yaml: upstream")).getMessage();
        assertTrue(e.contains(why), e);
        assertFalse(e.contains("secret"), "a password is never repeated: " + e);
    }
}
