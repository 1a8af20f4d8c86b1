package dev.fleproxy.bench.crypto;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The CPU model and clock from /proc/cpuinfo, to turn nanoseconds into cycles. */
final class CpuInfo {
    private CpuInfo() {
    }

    private static List<String> lines() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo"));
        } catch (IOException e) {
            return List.of();
        }
    }

    private static String field(String name) {
        for (String l : lines()) {
            if (l.startsWith(name)) {
                return l.substring(l.indexOf(':') + 1).trim();
            }
        }
        return null;
    }

    /** Nominal clock in GHz ("cpu MHz"); NaN where unknown, and the report then omits cycles. */
    static double ghz() {
        String mhz = field("cpu MHz");
        return mhz == null ? Double.NaN : Double.parseDouble(mhz) / 1000;
    }

    static String model() {
        String m = field("model name");
        return m == null ? "unknown CPU" : m;
    }

    /** The instruction-set extensions that matter here, as listed in the CPU flags. */
    static String relevantFlags() {
        String flags = field("flags");
        if (flags == null) {
            return "unknown";
        }
        StringBuilder s = new StringBuilder();
        for (String f : List.of("aes", "pclmulqdq", "avx2", "avx512f", "sha_ni", "vaes", "vpclmulqdq")) {
            if ((" " + flags + " ").contains(" " + f + " ")) {
                s.append(s.length() == 0 ? "" : ", ").append(f);
            }
        }
        return s.toString();
    }
}
