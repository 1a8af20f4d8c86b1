package dev.fleproxy.cli;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeyResolvers;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.policy.ConfigFile;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.rewrap.Adoption;
import dev.fleproxy.rewrap.Rewrap;
import dev.fleproxy.rewrap.Rewraps;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.bson.BsonDocument;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "rewrap",
        mixinStandardHelpOptions = true,
        description = "Re-encrypts a collection in place, online: every policy field that is not an envelope under "
                + "the collection's key, suite and variant (v1, a previous key, another suite; plaintext if adopted) "
                + "is rewritten.",
        footer = {
            "",
            "Talks to the upstream of the config directly (applications keep using the proxy",
            "meanwhile); the policy's previousKeys open what was written before. Each",
            "document is updated only if its fields still hold what was read, so no",
            "application write is overwritten. The checkpoint is kept in",
            "fle_proxy.rewrap_state. Only what opens under the collection's keys in its own",
            "field is sealed again; plaintext is adopted (encrypted) under plaintextReads:",
            "allow or with --adopt-plaintext, and envelope-like binaries, foreign envelopes",
            "and sub-documents outside --adopt-documents-in never. What is left is listed by",
            "_id (the first 100 per category) in the summary and the checkpoint. Exit codes:",
            "0 done; 3 done, but fields were left as they were (plaintext_denied,",
            "not_adoptable, unknown_key, unreadable, contended); 1 stopped (KMS or upstream",
            "gone for --retry-seconds; --resume continues); 2 bad arguments or config."
        })
final class RewrapCommand implements Callable<Integer> {

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "the proxy's YAML config")
    Path config;

    @Option(names = "--collection", required = true, paramLabel = "DB.COLL", description = "a collection of the policy")
    String namespace;

    @Option(names = "--dry-run", description = "count what would change, by category; write nothing")
    boolean dryRun;

    @Option(names = "--batch", defaultValue = "500", paramLabel = "N",
            description = "documents read per batch and between checkpoints (default ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--rate", defaultValue = "0", paramLabel = "DOCS_PER_S",
            description = "at most this many documents per second (default: no limit)")
    double rate;

    @Option(names = "--parallel", defaultValue = "1", paramLabel = "N",
            description = "batches rewritten at once, each on its own connection (default ${DEFAULT-VALUE}); the "
                    + "checkpoint stays behind the oldest batch not yet done")
    int parallel;

    @Option(names = "--resume", description = "continue after the checkpoint of a stopped run")
    boolean resume;

    @Option(names = "--adopt-plaintext", description = "encrypt the plaintext of a plaintextReads: deny collection "
            + "(the default under allow): values a client could have written; each adopted document is listed")
    boolean adoptPlaintext;

    @Option(names = "--adopt-documents-in", split = ",", paramLabel = "FIELD",
            description = "policy fields whose values are sub-documents or arrays: plaintext ones there are adopted "
                    + "too (elsewhere never)")
    Set<String> documentFields = new LinkedHashSet<>();

    @Option(names = "--retry-seconds", defaultValue = "60", paramLabel = "S",
            description = "how long an unreachable KMS or upstream is retried before the run stops (default ${DEFAULT-VALUE})")
    double retrySeconds;

    @Override
    public Integer call() {
        ProxyConfig cfg;
        CollectionPolicy cp;
        Adoption adoption;
        try {
            ConfigFile loaded = ConfigFile.load(config);
            cfg = loaded.config();
            Policy policy = loaded.policy();
            cp = policy.collections().get(namespace);
            if (cp == null) {
                throw new ConfigException(config + " has no policy for " + namespace + " (collections: "
                        + policy.collections().keySet() + ")");
            }
            if (cfg.kmip() == null) {
                throw new ConfigException(config + " has no kmip: section");
            }
            if (batch < 1 || batch > 100_000 || parallel < 1 || parallel > 64 || rate < 0 || retrySeconds < 0) {
                throw new ConfigException("--batch must be 1..100000, --parallel 1..64, --rate and --retry-seconds >= 0");
            }
            adoption = new Adoption(cp, adoptPlaintext, documentFields);
        } catch (ConfigException | IllegalArgumentException e) {
            System.err.println("fle-proxy: " + e.getMessage());
            return 2;
        }
        try (KmipClient kmip = KeyResolvers.client(cfg.kmip());
             KeyResolver resolver = KeyResolvers.resolver(cfg.kmip(), kmip);
             MongoClient client = MongoClients.create(UpstreamClients.settings(cfg))) {
            // every key asked for at once on the resolver's threads: the KMS answers while the
            // upstream connects and the first batch is read, so the run's start waits for the slower
            List<UUID> keyIds = new ArrayList<>(cp.previousKeys());
            keyIds.add(0, cp.keyId());
            resolver.fetch(keyIds);
            MongoCollection<BsonDocument> coll = client.getDatabase(cp.database())
                    .getCollection(cp.collection(), BsonDocument.class);
            MongoCollection<BsonDocument> state = client.getDatabase("fle_proxy")
                    .getCollection("rewrap_state", BsonDocument.class);
            CollectionPolicy policy = cp;
            Rewrap run = new Rewrap(coll, state, cp, () -> Rewraps.ciphers(policy, resolver, adoption),
                    new Rewrap.Options(batch, rate, dryRun, resume, retrySeconds, parallel), System.err, System.console() != null);
            Rewrap.Result r = run.run();
            System.out.printf(Locale.ROOT, "rewrap %s%s: %,d documents examined, %,d %s in %.1f s (%,.0f documents/s)%n"
                            + "  fields: %s%n", namespace, dryRun ? " (dry run)" : "", r.examined(), r.rewritten(),
                    dryRun ? "would be rewritten" : "rewritten", r.seconds(),
                    r.seconds() > 0 ? r.examined() / r.seconds() : 0.0, r.fields());
            if (r.skipped() > 0) {
                System.out.printf(Locale.ROOT, "  %,d field(s) in %,d document(s) %s as they were; their _ids are listed "
                        + "below%s%n", r.skipped(), r.leftDocuments(), dryRun ? "would be left" : "left",
                        dryRun ? "" : " and in fle_proxy.rewrap_state");
            }
            r.listing().forEach(line -> System.out.println("  " + line));
            return r.skipped() > 0 ? 3 : 0;
        } catch (Rewrap.Stopped e) {
            System.err.println("rewrap: stopped: " + e.getMessage() + ". The checkpoint is saved: run again with "
                    + "--resume once it is back.");
            return 1;
        } catch (IllegalStateException | ConfigException e) {
            System.err.println("rewrap: " + e.getMessage());
            return 2;
        }
    }
}
