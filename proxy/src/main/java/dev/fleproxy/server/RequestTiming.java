package dev.fleproxy.server;

/**
 * A forwarded request's times, kept until its first reply is read: when the proxy had read it,
 * when it was written to the upstream, and the collection label it is counted under.
 */
record RequestTiming(long readAtNanos, long forwardedAtNanos, String collection) {
}
