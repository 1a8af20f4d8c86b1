package dev.fleproxy.protocol;

import static dev.fleproxy.protocol.ArgKind.CONFIGURATION;
import static dev.fleproxy.protocol.ArgKind.OPTION;
import static dev.fleproxy.protocol.ArgKind.SETTINGS;

import dev.fleproxy.protocol.CommandSpec.OnEncrypted;
import dev.fleproxy.protocol.CommandSpec.Rewriter;
import dev.fleproxy.protocol.CommandSpec.Scope;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How {@link CommandTable} is built: its specs by every name, and the helpers its rows are written
 * with ({@code arg}, {@code option}, {@code settings}, …). A name listed twice, or an argument
 * listed twice for one command, stops the table from loading.
 */
final class CommandSpecs {
    private final Map<String, CommandSpec> specs = new HashMap<>();
    private final List<CommandSpec> all = new ArrayList<>();
    /** The specs under construction, by every name (used only while the table is built). */
    private final Map<String, Builder> builders = new HashMap<>();
    /** Arguments every command may carry. */
    private final List<Arg> generic;

    CommandSpecs(List<Arg> generic) {
        this.generic = generic;
    }

    CommandSpec get(String name) {
        return specs.get(name);
    }

    List<CommandSpec> all() {
        return List.copyOf(all);
    }

    Set<String> names() {
        return Set.copyOf(specs.keySet());
    }

    Builder spec(String name, Scope scope, OnEncrypted onEncrypted, Rewriter rewriter) {
        Builder b = new Builder(name, scope, onEncrypted, rewriter);
        b.register(name);
        return b;
    }

    Builder builder(String name) {
        return builders.get(name);
    }

    static Arg arg(String name, ArgKind kind, Arg... fields) {
        return new Arg(name, kind, byName(List.of(fields)), false);
    }

    /** An argument drivers may also send as a document sequence. */
    static Arg sequence(String name, ArgKind kind, Arg... fields) {
        return new Arg(name, kind, byName(List.of(fields)), true);
    }

    static Arg option(String name) {
        return arg(name, OPTION);
    }

    static Arg configuration(String name) {
        return arg(name, CONFIGURATION);
    }

    static Arg settings(String name, Arg... fields) {
        return arg(name, SETTINGS, fields);
    }

    private static Map<String, Arg> byName(Collection<Arg> args) {
        Map<String, Arg> out = new LinkedHashMap<>();
        for (Arg a : args) {
            if (out.put(a.name(), a) != null) {
                throw new IllegalStateException("argument " + a.name() + " listed twice");
            }
        }
        return out;
    }

    /** A spec under construction: each change re-registers the rebuilt record under all its names. */
    final class Builder {
        private final String name;
        private final Scope scope;
        private final OnEncrypted onEncrypted;
        private final Rewriter rewriter;
        private final List<String> names = new ArrayList<>();
        private final List<Arg> args = new ArrayList<>(generic);
        private boolean labelled;
        private boolean crossReferences;
        private Arg self;
        private Arg others;
        private CommandSpec built;

        Builder(String name, Scope scope, OnEncrypted onEncrypted, Rewriter rewriter) {
            this.name = name;
            this.scope = scope;
            this.onEncrypted = onEncrypted;
            this.rewriter = rewriter;
        }

        Builder args(Arg... more) {
            args.addAll(List.of(more));
            return rebuild();
        }

        /** What the command's own element holds, when more than a name or a single value. */
        Builder self(Arg own) {
            self = own;
            return rebuild();
        }

        /** How arguments the row does not list are examined (the server's own names: parameters, filters). */
        Builder others(Arg rest) {
            others = rest;
            return rebuild();
        }

        Builder alias(String alias) {
            register(alias);
            return this;
        }

        Builder labelled() {
            labelled = true;
            return rebuild();
        }

        Builder crossReferences() {
            crossReferences = true;
            return rebuild();
        }

        void register(String n) {
            if (specs.containsKey(n)) {
                throw new IllegalStateException("command " + n + " listed twice");
            }
            names.add(n);
            builders.put(n, this);
            rebuild();
        }

        private Builder rebuild() {
            CommandSpec spec = new CommandSpec(name, scope, onEncrypted, rewriter, byName(args), labelled,
                    crossReferences, self, others);
            if (built != null) {
                all.remove(built);
            }
            all.add(spec);
            built = spec;
            for (String n : names) {
                specs.put(n, spec);
            }
            return this;
        }
    }
}
