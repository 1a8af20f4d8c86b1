package dev.fleproxy.testing;

/** Finding bytes in a message, for tests that change one length or name in it. */
public final class Bytes {
    private Bytes() {
    }

    /** Where needle first starts in haystack; fails the test if it is not there. */
    public static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
