package dev.fleproxy.bench.crypto;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** `openssl speed -evp` for one cipher and message size, in the same run as our benchmark. */
final class OpenSslSpeed {
    private static final Pattern LAST = Pattern.compile("^\\S+\\s+([0-9.]+)k\\s*$");

    private OpenSslSpeed() {
    }

    static String version() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("openssl", "version").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        p.waitFor();
        return out;
    }

    /** Bytes per second, or -1 if OpenSSL does not have the cipher. */
    static double bytesPerSecond(String evpCipher, boolean legacy, int bytes, boolean decrypt, int seconds)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl", "speed"));
        if (legacy) {
            cmd.addAll(List.of("-provider", "legacy", "-provider", "default"));
        }
        if (decrypt) {
            cmd.add("-decrypt");
        }
        cmd.addAll(List.of("-seconds", String.valueOf(seconds), "-bytes", String.valueOf(bytes), "-evp", evpCipher));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String[] lines = new String(p.getInputStream().readAllBytes()).trim().split("\n");
        p.waitFor();
        Matcher m = LAST.matcher(lines[lines.length - 1].trim());
        // openssl reports in thousands of bytes per second
        return m.matches() ? Double.parseDouble(m.group(1)) * 1000 : -1;
    }
}
