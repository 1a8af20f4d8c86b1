package dev.fleproxy.keys;

import dev.fleproxy.kmip.KmipEnum;

/** A key's KMIP state, and what the proxy may do with it (docs/keys.md, "Keys over KMIP"). */
public enum KeyState {
    PRE_ACTIVE("Pre-Active"),
    ACTIVE("Active"),
    DEACTIVATED("Deactivated"),
    COMPROMISED("Compromised"),
    DESTROYED("Destroyed"),
    DESTROYED_COMPROMISED("Destroyed Compromised");

    private final String label;

    KeyState(String label) {
        this.label = label;
    }

    public static KeyState fromKmip(int value) {
        return switch (value) {
            case KmipEnum.STATE_PRE_ACTIVE -> PRE_ACTIVE;
            case KmipEnum.STATE_ACTIVE -> ACTIVE;
            case KmipEnum.STATE_DEACTIVATED -> DEACTIVATED;
            case KmipEnum.STATE_COMPROMISED -> COMPROMISED;
            case KmipEnum.STATE_DESTROYED -> DESTROYED;
            case KmipEnum.STATE_DESTROYED_COMPROMISED -> DESTROYED_COMPROMISED;
            default -> throw new IllegalArgumentException("unknown KMIP state " + value);
        };
    }

    /** New data is encrypted only under Active keys. */
    public boolean mayEncrypt() {
        return this == ACTIVE;
    }

    /** Existing data decrypts under Active and Deactivated (revoked) keys. */
    public boolean mayDecrypt() {
        return this == ACTIVE || this == DEACTIVATED;
    }

    @Override
    public String toString() {
        return label;
    }
}
