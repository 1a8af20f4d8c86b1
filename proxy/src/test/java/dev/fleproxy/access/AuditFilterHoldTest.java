package dev.fleproxy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fleproxy.audit.AuditEvent;
import dev.fleproxy.audit.AuditLog;
import dev.fleproxy.crypto.ChainMac;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.Requests;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit filter holds a server's reply until the request's line is on file (the lane parks it
 * and asks again), lets it go then without writing the line twice, and replaces it with 9720042
 * when the line could not be written.
 */
class AuditFilterHoldTest {
    private static final DataKey KEY = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, new byte[32]);

    @TempDir
    Path dir;

    private static AuditEvent event() {
        return new AuditEvent(0, AuditEvent.who(1, "support", "/127.0.0.1:5000"),
                AuditEvent.what("find", "acc.people", Map.of("ssn", "revealed")));
    }

    private static Reply reply() {
        return Requests.replyOf(new OpMsg(0, BsonDocument.parse("{ok: 1, cursor: {firstBatch: [{}], id: 0, ns: 'acc.people'}}")));
    }

    /** Asks as the reply lane does: again once what it awaited is done. */
    private static ReplyDecision settle(AuditFilter f, Reply r, AuditEvent e) throws Exception {
        ReplyDecision d = f.onReply(r, e);
        if (d instanceof ReplyDecision.AwaitUpstream a) { // the reply waits, the upstream still read
            a.ready().toCompletableFuture().handle((v, x) -> null).get(10, TimeUnit.SECONDS);
            d = f.onReply(r, e);
        }
        return d;
    }

    @Test
    void aReplyGoesOnceItsLineIsOnFileAndTheLineIsWrittenOnce() throws Exception {
        Path file = dir.resolve("audit.log");
        try (AuditLog log = new AuditLog(file, ChainMac.of(KEY), Long.MAX_VALUE, Duration.ZERO, 100, AuditLog.OnFull.REFUSE, false)) {
            AuditFilter f = new AuditFilter(log, ProxyMetrics.DISABLED);
            AuditEvent e = event();
            Reply r = reply();
            assertSame(ReplyDecision.PASS, settle(f, r, e));
            assertSame(ReplyDecision.PASS, f.onReply(r, e), "asked again (an exhaust stream's next reply): no new line");
            assertEquals(1, log.written());
        }
        assertEquals(1, Files.readAllLines(file).size());
    }

    @Test
    void aReplyWhoseLineCannotBeWrittenIsReplacedByTheAuditError() throws Exception {
        Path full = Path.of("/dev/full"); // every write fails with ENOSPC, as on a full disk
        assumeTrue(Files.isWritable(full), "needs Linux's /dev/full");
        Path file = Files.createSymbolicLink(dir.resolve("audit.log"), full);
        try (AuditLog log = new AuditLog(file, ChainMac.of(KEY), Long.MAX_VALUE, Duration.ZERO, 100, AuditLog.OnFull.REFUSE, false)) {
            AuditFilter f = new AuditFilter(log, ProxyMetrics.DISABLED);
            ReplyDecision d = settle(f, reply(), event());
            ReplyDecision.Replace replaced = assertInstanceOf(ReplyDecision.Replace.class, d);
            BsonDocument body = OpMsgView.of(replaced.frame()).body();
            assertEquals(9720042, body.getNumber("code").intValue(), body.toJson());
            assertEquals(0, body.getNumber("ok").intValue());
            assertTrue(body.getString("errmsg").getValue().contains("withheld"), body.toJson());
        }
    }
}
