package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.fleproxy.config.Limits;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Admission at maxConnections: past it connections are answered, and only so many at once. */
class ClientBoundsTest {
    private final ClientBounds bounds = new ClientBounds(new Limits(30_000, 0, 1, 1L << 30),
            new BadInputLog(LoggerFactory.getLogger(ClientBoundsTest.class)));

    @Test
    void pastTheLimitConnectionsAreAnsweredUpToABoundThenClosedAtOnce() {
        EmbeddedChannel admitted = new EmbeddedChannel();
        assertEquals(ClientBounds.Admission.ADMITTED, bounds.admit(admitted));
        List<EmbeddedChannel> answering = new ArrayList<>();
        for (int i = 0; i < ClientBounds.REFUSALS_AT_ONCE; i++) {
            EmbeddedChannel ch = new EmbeddedChannel();
            answering.add(ch);
            assertEquals(ClientBounds.Admission.ANSWER_AND_CLOSE, bounds.admit(ch));
        }
        EmbeddedChannel flood = new EmbeddedChannel();
        assertEquals(ClientBounds.Admission.CLOSED, bounds.admit(flood));
        assertFalse(flood.isOpen());

        answering.get(0).close(); // answered and closed: room to answer one more
        assertEquals(ClientBounds.Admission.ANSWER_AND_CLOSE, bounds.admit(new EmbeddedChannel()));
        assertEquals(ClientBounds.Admission.CLOSED, bounds.admit(new EmbeddedChannel()));
        admitted.close(); // a slot
        assertEquals(ClientBounds.Admission.ADMITTED, bounds.admit(new EmbeddedChannel()));
        assertEquals(1, bounds.connections());
    }
}
