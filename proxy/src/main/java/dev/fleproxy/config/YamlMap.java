package dev.fleproxy.config;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Typed reads from one YAML mapping, with messages that name the file and the full key path
 * ("proxy.yaml: kmip.port must be an integer 1-65535"). Unknown keys are an error, so a typo
 * never silently leaves a setting at its default.
 */
final class YamlMap {
    private final Map<?, ?> map;
    private final String source;
    private final String path;
    private final Path baseDir;

    /** @param path the dotted key path of this mapping, "" for the root */
    YamlMap(Object node, String source, String path, Path baseDir) {
        if (!(node instanceof Map<?, ?> m)) {
            throw new ConfigException(source + ": " + (path.isEmpty() ? "the file" : path) + " must be a mapping");
        }
        this.map = m;
        this.source = source;
        this.path = path;
        this.baseDir = baseDir;
    }

    /** "file.yaml: kmip.port", for messages. */
    String where(String key) {
        return source + ": " + (path.isEmpty() ? key : path + "." + key);
    }

    /** Allows only the keys {@link ConfigSchema} lists for this section. */
    void allowOnlySection(String section) {
        allowOnly(ConfigSchema.keysOf(section));
    }

    void allowOnly(Set<String> known) {
        Set<String> unknown = new TreeSet<>();
        for (Object k : map.keySet()) {
            if (!known.contains(String.valueOf(k))) {
                unknown.add(String.valueOf(k));
            }
        }
        if (!unknown.isEmpty()) {
            throw new ConfigException(source + ": " + (path.isEmpty() ? "" : path + ": ") + "unknown key(s) " + unknown
                    + "; known keys are " + new TreeSet<>(known));
        }
    }

    boolean has(String key) {
        return map.get(key) != null;
    }

    Object raw(String key) {
        return map.get(key);
    }

    String string(String key) {
        Object v = map.get(key);
        if (v == null) {
            throw new ConfigException(where(key) + " is missing");
        }
        return v.toString();
    }

    String string(String key, String dflt) {
        return has(key) ? string(key) : dflt;
    }

    /** An integer setting: its default when absent, its bounds checked. */
    int integer(ConfigSchema.Setting s) {
        return integer(s.key(), s.intDefault(), (int) s.min(), (int) Math.min(Integer.MAX_VALUE, s.max()));
    }

    /** An integer setting that may pass 2^31 (bytes): its default when absent, its bounds checked. */
    long longInteger(ConfigSchema.Setting s) {
        Object v = map.get(s.key());
        if (v == null) {
            return s.longDefault();
        }
        if (!(v instanceof Integer || v instanceof Long) || ((Number) v).longValue() < s.min()
                || ((Number) v).longValue() > s.max()) {
            throw new ConfigException(where(s.key()) + " must be an integer of at least " + s.min() + ", not " + v);
        }
        return ((Number) v).longValue();
    }

    int integer(String key, int dflt, int min, int max) {
        Object v = map.get(key);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Integer i) || i < min || i > max) {
            throw new ConfigException(where(key) + " must be an integer " + min + "-" + max + ", not " + v);
        }
        return i;
    }

    /** A file path, relative to the config file's directory unless absolute. */
    Path path(String key) {
        Path p = Path.of(string(key));
        return p.isAbsolute() || baseDir == null ? p : baseDir.resolve(p).normalize();
    }

    YamlMap child(String key) {
        return new YamlMap(map.get(key), source, path.isEmpty() ? key : path + "." + key, baseDir);
    }
}
