package dev.fleproxy.cli;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.json.JsonWriterSettings;
import picocli.CommandLine.Command;

/**
 * {@code fle-proxy.jar commands}: the command table as JSON, one object per command: every name it
 * has, how it names its namespace, what the proxy does with it on an encrypted collection, and
 * every argument it may carry there with what that holds. What the proxy forwards while
 * collections are encrypted is exactly this; the leak fuzzer (proxy/tests/leak_fuzz.py) generates
 * its commands from it.
 */
@Command(name = "commands", mixinStandardHelpOptions = true,
        description = "Print the command table (every command the proxy knows, its arguments and what each holds) as JSON.")
final class CommandsCommand implements Runnable {

    @Override
    public void run() {
        Map<String, java.util.List<String>> names = new TreeMap<>();
        for (String n : CommandTable.names()) {
            names.computeIfAbsent(CommandTable.get(n).name(), k -> new java.util.ArrayList<>()).add(n);
        }
        BsonArray out = new BsonArray();
        CommandTable.all().stream().sorted(Comparator.comparing(CommandSpec::name)).forEach(spec -> {
            BsonDocument d = new BsonDocument("name", new BsonString(spec.name()))
                    .append("names", strings(names.get(spec.name())))
                    .append("scope", new BsonString(spec.scope().name()))
                    .append("onEncrypted", new BsonString(spec.onEncrypted().name()))
                    .append("args", args(spec.args()));
            if (spec.self() != null) {
                d.append("self", arg(spec.self()));
            }
            if (spec.others() != null) {
                d.append("others", arg(spec.others()));
            }
            out.add(d);
        });
        BsonDocument stages = new BsonDocument();
        for (String s : new String[] {"$currentOp", "$listLocalSessions", "$querySettings", "$listSampledQueries",
                "$listClusterCatalog", "$shardedDataDistribution"}) {
            stages.append(s, arg(CommandTable.databaseStage(s)));
        }
        BsonDocument all = new BsonDocument("commands", out).append("databaseStages", stages);
        System.out.println(all.toJson(JsonWriterSettings.builder().indent(true).build()));
    }

    private static BsonArray strings(java.util.List<String> values) {
        BsonArray a = new BsonArray();
        values.stream().sorted().forEach(v -> a.add(new BsonString(v)));
        return a;
    }

    private static BsonDocument args(Map<String, Arg> args) {
        BsonDocument d = new BsonDocument();
        new TreeMap<>(args).forEach((k, v) -> d.append(k, arg(v)));
        return d;
    }

    private static BsonDocument arg(Arg a) {
        BsonDocument d = new BsonDocument("kind", new BsonString(a.kind().name()));
        if (a.sequence()) {
            d.append("sequence", BsonBoolean.TRUE);
        }
        if (!a.fields().isEmpty()) {
            d.append("fields", args(a.fields()));
        }
        return d;
    }
}
