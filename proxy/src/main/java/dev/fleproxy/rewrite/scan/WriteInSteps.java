package dev.fleproxy.rewrite.scan;

import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import java.time.Duration;

/** A write the proxy carries out in steps, attached to its request between them. */
interface WriteInSteps {
    /** The next step: a call (or keys) to wait for, or the answer. */
    RequestDecision step(Request request, CollectionKeys keys, Duration kmsWait);
}
