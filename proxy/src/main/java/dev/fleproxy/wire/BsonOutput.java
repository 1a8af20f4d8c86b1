package dev.fleproxy.wire;

import java.nio.charset.StandardCharsets;
import org.bson.BsonSerializationException;
import org.bson.io.BasicOutputBuffer;

/**
 * The driver's output buffer with strings written in bulk. The driver writes a string one UTF-8
 * byte at a time, each with a capacity check; measured in the proxy under the overhead
 * benchmark, that was the largest single cost of re-encoding decrypted replies.
 */
public final class BsonOutput extends BasicOutputBuffer {

    public BsonOutput() {
        super();
    }

    public BsonOutput(int initialSize) {
        super(initialSize);
    }

    /** Writes the string's UTF-8 bytes and a NUL; returns how many bytes that was. */
    @Override
    protected int writeCharacters(String str, boolean checkForNullCharacters) {
        byte[] utf8 = str.getBytes(StandardCharsets.UTF_8);
        if (checkForNullCharacters) {
            for (int i = 0; i < utf8.length; i++) {
                if (utf8[i] == 0) {
                    // the string is a field name: no value is ever put in a message
                    throw new BsonSerializationException("BSON cstring is not valid because it contains a null "
                            + "character at byte " + i);
                }
            }
        }
        writeBytes(utf8, 0, utf8.length);
        writeByte(0);
        return utf8.length + 1;
    }
}
