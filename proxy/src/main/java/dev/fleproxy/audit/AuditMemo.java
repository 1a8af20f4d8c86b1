package dev.fleproxy.audit;

import java.util.Map;

/**
 * What a connection's audit lines repeat, encoded once: its {@link AuditEvent#who} for the
 * identity it has now, and the {@link AuditEvent#what} of the last few (collection policy,
 * command, identity) it used, matched by reference (a reload makes new policies, so a new
 * entry). Used on the connection's event loop only.
 */
public final class AuditMemo {
    /** What a command on a collection's lines say of its fields, and how many fields got each outcome. */
    public record Scope(byte[] what, Map<String, Integer> outcomes) {
    }

    private static final int SCOPES = 8;

    private String identity;
    private byte[] who;
    private final Object[] policies = new Object[SCOPES];
    private final Object[] commands = new Object[SCOPES];
    private final String[] identities = new String[SCOPES];
    private final Scope[] scopes = new Scope[SCOPES];
    private int next;

    public byte[] who(long connection, String identity, String client) {
        if (!identity.equals(this.identity)) {
            this.identity = identity;
            who = AuditEvent.who(connection, identity, client);
        }
        return who;
    }

    /** The scope remembered for these, or null. */
    public Scope scope(Object policy, Object command, String identity) {
        for (int i = 0; i < SCOPES; i++) {
            if (policies[i] == policy && commands[i] == command && identity.equals(identities[i])) {
                return scopes[i];
            }
        }
        return null;
    }

    /** Remembers a scope in place of the oldest. */
    public Scope remember(Object policy, Object command, String identity, Scope scope) {
        policies[next] = policy;
        commands[next] = command;
        identities[next] = identity;
        scopes[next] = scope;
        next = (next + 1) % SCOPES;
        return scope;
    }
}
