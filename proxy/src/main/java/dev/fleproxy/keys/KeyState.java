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

    /**
     * Why a key in this state may not encrypt ({@code encrypt}) or decrypt, as "is STATE; only …",
     * or null if it may: the one statement of the rules above, for every refusal and readiness.
     */
    public String refusal(boolean encrypt) {
        if (encrypt ? mayEncrypt() : mayDecrypt()) {
            return null;
        }
        return "is " + this + (encrypt ? "; only Active keys encrypt" : "; only Active or Deactivated keys decrypt");
    }

    /** What an operator can do about a refusal in this state, or "". */
    String hint() {
        return switch (this) {
            case PRE_ACTIVE -> " (activate it in the KMS first)";
            case DEACTIVATED -> " (it was revoked: existing data still decrypts)";
            default -> "";
        };
    }

    @Override
    public String toString() {
        return label;
    }
}
