package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The user a SCRAM client-first message names (the server's proof binds it; see AuthenticationWatch). */
class AuthenticationWatchTest {
    private static String user(String firstMessage) {
        return AuthenticationWatch.ScramFirstMessage.user(firstMessage.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theUsernameOfTheFirstMessageUnescaped() {
        assertEquals("etl", user("n,,n=etl,r=fyko+d2lbbFgONRv9qkxdawL"));
        assertEquals("a,b=c", user("n,,n=a=2Cb=3Dc,r=x"));
        assertEquals("app", user("y,a=admin,n=app,r=x"), "an authzid and a channel-binding flag before it");
    }

    @Test
    void aMalformedMessageNamesNoOne() {
        assertNull(user("n=etl,r=x"));
        assertNull(user("n,,r=x"));
        assertNull(user("n,,n=,r=x"));
        assertNull(user("n,,n=bad=41escape,r=x"));
    }
}
