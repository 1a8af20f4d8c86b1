package dev.fleproxy.cli;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeyResolvers;
import dev.fleproxy.keys.ResolvedKey;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "keys",
        mixinStandardHelpOptions = true,
        description = "Resolves keys through the proxy's KMS settings, as the proxy would.",
        footer = {
            "",
            "Prints UUID | algorithm | bits | state | KMS object | fingerprint (first 8 bytes of",
            "SHA-256 of the key, never the key). Exit code 1 if any key cannot be resolved.",
            "With --bench N: median latency of N cold resolutions (Locate + Get + GetAttributes on an",
            "open connection) and of N cached ones, then the KMIP round-trip count over 100,000",
            "resolutions after warm-up (it should not move)."})
final class KeysCommand implements Callable<Integer> {

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "the proxy's YAML config (its kmip: section)")
    Path config;

    @Option(names = "--bench", paramLabel = "N", description = "measure resolution latency over N resolutions")
    Integer bench;

    @Parameters(arity = "1..*", paramLabel = "UUID", description = "key UUIDs (their KMIP Name)")
    List<UUID> ids;

    @Override
    public Integer call() throws Exception {
        KmipConfig kmip;
        try {
            kmip = ProxyConfig.load(config).kmip();
        } catch (ConfigException e) {
            System.err.println("fle-proxy: " + e.getMessage());
            return 2;
        }
        if (kmip == null) {
            System.err.println("fle-proxy: " + config + " has no kmip: section");
            return 2;
        }
        try (KmipClient client = KeyResolvers.client(kmip); KeyResolver resolver = KeyResolvers.resolver(kmip, client)) {
            if (bench != null) {
                return bench(kmip, client, resolver);
            }
            int failures = 0;
            System.out.printf(Locale.ROOT, "%-36s | %-10s | %4s | %-11s | %-10s | %s%n", "UUID", "algorithm", "bits",
                    "state", "KMS object", "fingerprint");
            for (UUID id : ids) {
                try {
                    ResolvedKey k = resolver.resolve(id);
                    System.out.printf(Locale.ROOT, "%-36s | %-10s | %4d | %-11s | %-10s | %s%n", id, k.key().algorithm(),
                            k.key().bits(), k.state(), k.kmsUid(), k.key().fingerprint());
                } catch (KeyAccessException e) {
                    failures++;
                    System.out.printf(Locale.ROOT, "%-36s | error: %s: %s%n", id, e.reason(), e.getMessage());
                }
            }
            return failures == 0 ? 0 : 1;
        }
    }

    private int bench(KmipConfig kmip, KmipClient client, KeyResolver warm) {
        UUID id = ids.get(0);
        warm.resolve(id); // opens the TLS connection
        long[] cold = new long[bench];
        for (int i = 0; i < bench; i++) {
            try (KeyResolver fresh = KeyResolvers.resolver(kmip, client)) {
                long t0 = System.nanoTime();
                fresh.resolve(id);
                cold[i] = System.nanoTime() - t0;
            }
        }
        long before = client.roundTrips();
        long fetchesBefore = warm.kmsFetches();
        for (int i = 0; i < 100_000; i++) {
            warm.forDecryption(id);
        }
        long after = client.roundTrips();
        long fetchesAfter = warm.kmsFetches();
        long[] cached = new long[bench];
        for (int i = 0; i < bench; i++) {
            long t0 = System.nanoTime();
            warm.forDecryption(id);
            cached[i] = System.nanoTime() - t0;
        }
        System.out.printf(Locale.ROOT, "key %s via %s%n", id, warm.describeSource());
        System.out.printf(Locale.ROOT, "cold resolve (Locate + Get + GetAttributes): median %.2f ms over %d%n",
                median(cold) / 1e6, bench);
        System.out.printf(Locale.ROOT, "100000 warm resolutions: KMIP round trips %d -> %d, KMS fetches %d -> %d%n",
                before, after, fetchesBefore, fetchesAfter);
        System.out.printf(Locale.ROOT, "cached resolve (after those): median %d ns over %d%n", median(cached), bench);
        return 0;
    }

    private static long median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
