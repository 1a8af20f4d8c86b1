package dev.fleproxy.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TargetTest {
    @Test
    void defaultsAndNames() {
        Target d = Target.parse("kind=direct,uri=mongodb://127.0.0.1:27017");
        assertEquals(new Target("direct", Target.Kind.DIRECT, "mongodb://127.0.0.1:27017", "plain", 0, null, null, null, false, false), d);
        Target r = Target.parse("kind=relay,uri=mongodb://h:1,pid=42,transport=EPOLL");
        assertEquals("relay epoll", r.name());
        assertEquals(42, r.pid());
        assertTrue(r.measured());
        assertEquals("proxy nio, no policy", Target.parse("kind=proxy-plain,uri=mongodb://h:1,transport=nio").name());
        Target e = Target.parse("kind=encrypted,uri=mongodb://h:1,pid=7,transport=io_uring,suite=aes-gcm,collection=aes,alloc=both");
        assertEquals("AES_GCM io_uring", e.name());
        assertEquals("AES_GCM", e.suite());
        assertEquals("aes", e.collection());
        assertEquals(Target.Alloc.BOTH, e.alloc());
        assertEquals("3DES", Target.parse("kind=encrypted,name=3DES,uri=mongodb://h:1,transport=epoll,suite=TDES_CBC_HMAC,"
                + "collection=tdes").name());
        assertNull(r.alloc());
    }

    @Test
    void tlsTargetsAreNamedApart() {
        Target p = Target.parse("kind=proxy-plain,uri=mongodb://127.0.0.1:1/?tls=true,pid=3,transport=epoll,tls=true");
        assertTrue(p.tls());
        assertEquals("proxy epoll, no policy, TLS", p.name());
        assertEquals("mongodb://127.0.0.1:1/?tls=true", p.uri());
        Target e = Target.parse("kind=encrypted,uri=mongodb://h:1/?appName=x&tls=TRUE,transport=epoll,suite=AES_GCM,"
                + "collection=aes,tls=TRUE");
        assertEquals("AES_GCM epoll, TLS", e.name());
        assertTrue(e.tls());
        // tls=true alone is enough: the client turns TLS on whatever the URI says.
        assertTrue(Target.parse("kind=proxy-plain,uri=mongodb://h:1,transport=nio,tls=true").tls());
        assertEquals(false, Target.parse("kind=proxy-plain,uri=mongodb://h:1,transport=nio,tls=false").tls());
        assertEquals(false, Target.parse("kind=proxy-plain,uri=mongodb://h:1/?tls=false,transport=nio").tls());
    }

    @Test
    void aUriMayListHostsAndCarryOptions() {
        Target t = Target.parse("kind=proxy-plain,uri=mongodb://a:1,b:2/?w=1&appName=x,transport=epoll,pid=3");
        assertEquals("mongodb://a:1,b:2/?w=1&appName=x", t.uri());
        assertEquals(3, t.pid());
    }

    @Test
    void targetsOfOneProcessShareItsWarmUp() {
        java.util.List<Target> targets = java.util.List.of(
                Target.parse("kind=direct,uri=mongodb://h:1"),
                Target.parse("kind=proxy-plain,uri=mongodb://h:2,pid=9,transport=nio"),
                Target.parse("kind=relay,uri=mongodb://h:3,pid=8,transport=nio"),
                Target.parse("kind=encrypted,uri=mongodb://h:2,pid=9,transport=nio,suite=AES_GCM,collection=aes"));
        assertEquals(java.util.List.of(1, 2, 1),
                OverheadBenchmark.byProcess(targets).values().stream().map(java.util.List::size).toList());
    }

    @Test
    void mistakesAreNamed() {
        assertMessage("kind= is missing", "uri=mongodb://h:1");
        assertMessage("kind must be", "kind=mongos,uri=mongodb://h:1");
        assertMessage("uri= must be", "kind=direct,uri=h:1");
        assertMessage("transport= is missing", "kind=relay,uri=mongodb://h:1");
        assertMessage("transport must be", "kind=relay,uri=mongodb://h:1,transport=auto");
        assertMessage("suite= is missing", "kind=encrypted,uri=mongodb://h:1,transport=nio,collection=aes");
        assertMessage("unknown suite", "kind=encrypted,uri=mongodb://h:1,transport=nio,collection=aes,suite=ROT13");
        assertMessage("collection= is missing", "kind=encrypted,uri=mongodb://h:1,transport=nio,suite=AES_GCM");
        assertMessage("suite= is for encrypted", "kind=relay,uri=mongodb://h:1,transport=nio,suite=AES_GCM");
        assertMessage("pid= must be", "kind=relay,uri=mongodb://h:1,transport=nio,pid=-3");
        assertMessage("given twice", "kind=relay,kind=relay,uri=mongodb://h:1,transport=nio");
        assertMessage("alloc must be", "kind=relay,uri=mongodb://h:1,transport=nio,alloc=all");
        assertMessage("is not one of", "kind=relay,uri=mongodb://h:1,transport=nio,colour=red");
        assertMessage("tls must be true or false", "kind=relay,uri=mongodb://h:1,transport=nio,tls=yes");
        assertMessage("say tls=true too", "kind=proxy-plain,uri=mongodb://h:1/?tls=true,transport=nio");
        assertMessage("say tls=true too", "kind=proxy-plain,uri=mongodb://h:1/?ssl=true&w=1,transport=nio");
        assertMessage("the uri says tls=false", "kind=proxy-plain,uri=mongodb://h:1/?tls=false,transport=nio,tls=true");
    }

    private static void assertMessage(String expected, String spec) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Target.parse(spec));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
