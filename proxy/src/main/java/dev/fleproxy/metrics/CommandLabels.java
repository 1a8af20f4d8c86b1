package dev.fleproxy.metrics;

import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The values of the {@code command} label: a fixed list (the command table's labelled commands),
 * so a client cannot grow the metrics by sending commands with made-up names (anything else is
 * {@code other}). Each label has an index, so the data path counts requests in an array.
 */
final class CommandLabels {
    /** The commands with a label of their own: those the command table marks so, in its order. */
    private static final List<CommandSpec> KNOWN = CommandTable.all().stream().filter(CommandSpec::labelled).toList();

    /** Every label, by index: the known names, then {@code other} and {@code none}. */
    static final List<String> LABELS;
    static final int OTHER;
    static final int NONE;
    private static final Map<String, Integer> INDEX = new HashMap<>();

    static {
        List<String> all = new java.util.ArrayList<>(KNOWN.stream().map(CommandSpec::name).toList());
        all.add("other");
        all.add("none");
        LABELS = List.copyOf(all);
        OTHER = LABELS.indexOf("other");
        NONE = LABELS.indexOf("none");
        for (String name : CommandTable.names()) {
            CommandSpec spec = CommandTable.get(name);
            if (spec.labelled()) {
                INDEX.put(name, LABELS.indexOf(spec.name())); // an alias counts as its command
            }
        }
    }

    private CommandLabels() {
    }

    /** The label for a command name; null (not a command: a legacy opcode or a plain query) is {@code none}. */
    static String of(String command) {
        return LABELS.get(index(command));
    }

    /** The index in {@link #LABELS} of a command name's label. */
    static int index(String command) {
        if (command == null || command.isEmpty()) {
            return NONE;
        }
        Integer i = INDEX.get(command);
        return i != null ? i : OTHER;
    }
}
