package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeysPending;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Command;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.read.CollatedReads;
import dev.fleproxy.rewrite.read.EvaluatedReads;
import dev.fleproxy.rewrite.read.FieldMasks;
import dev.fleproxy.rewrite.read.EvaluationMemory;
import dev.fleproxy.rewrite.read.EvaluationPool;
import dev.fleproxy.rewrite.read.Replies;
import dev.fleproxy.rewrite.scan.CollatedWrites;
import dev.fleproxy.rewrite.scan.EvaluatedWrites;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.OpMsgView;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Encrypts what is written to, and decrypts what is read from, the collections of the policy
 * (docs/query-model.md). This class decides which command goes where; the work is done by the
 * rewriters ({@link Rewriters}), the proxy's own evaluation ({@link EvaluatedReads}, {@link
 * EvaluatedWrites}) and, for replies, {@link Replies}. Requests to other collections pass untouched after a look at their body's
 * {@code $db} and collection name and, for the commands that can name another collection, at
 * those ({@link CrossReferences}). For an encrypted collection every command is either rewritten
 * correctly, passed because it does not touch field values, or refused with a MongoDB error
 * reply: nothing of a policy field is ever forwarded in plaintext. A command whose keys are not in
 * memory waits for them (an await decision), so no KMS round trip ever happens on an event loop.
 */
public final class EncryptionFilter implements MessageFilter {
    private final Supplier<Policy> policy;
    private final KeyResolver resolver;
    private final Envelopes envelopes = new Envelopes();
    /** How long a message may wait for keys not in memory (kmip.kmsWaitMs): its await decisions carry it. */
    private final Duration kmsWait;
    /** The encrypted-path trees of the policy in force, built once per policy (a reload makes a new one). */
    private final CollectionContexts contexts;
    /** The replies to reads, and the cursors they open. */
    private final Replies replies;
    private final ProxyMetrics metrics;
    /** Commands on a database that holds encrypted collections (or on admin) that name none of them. */
    private final DatabaseCommands databases;
    /** The rewriter each command on an encrypted collection goes through. */
    private final Rewriters rewriters;

    /** @param kmsWait how long a message may wait for keys (its await decisions carry it; refusals name it) */
    public EncryptionFilter(Supplier<Policy> policy, KeyResolver resolver, Duration kmsWait) {
        this(policy, resolver, kmsWait, ProxyMetrics.DISABLED);
    }

    /** @param metrics where replies replaced with errors are counted */
    public EncryptionFilter(Supplier<Policy> policy, KeyResolver resolver, Duration kmsWait, ProxyMetrics metrics) {
        this(policy, resolver, kmsWait, metrics, EvaluationMemory.unbounded(), new EvaluationPool(1));
    }

    /**
     * @param memory what evaluated queries may hold, all clients together
     * @param pool   where large evaluations run, off the event loops (the caller closes it)
     */
    public EncryptionFilter(Supplier<Policy> policy, KeyResolver resolver, Duration kmsWait, ProxyMetrics metrics,
                            EvaluationMemory memory, EvaluationPool pool) {
        this.metrics = metrics;
        this.policy = policy;
        this.resolver = resolver;
        this.kmsWait = kmsWait;
        this.contexts = new CollectionContexts(policy);
        this.replies = new Replies(resolver, envelopes, kmsWait, metrics, policy, memory, pool);
        this.databases = new DatabaseCommands(policy);
        this.rewriters = new Rewriters(replies);
    }

    /** Decides by the policy the admission gate admitted the request by (the one in force if it was not). */
    @Override
    public RequestDecision onRequest(Request request) {
        Command command = request.command();
        Policy p = command != null ? request.policy() : policy.get();
        if (p.isEmpty()) {
            return RequestDecision.PASS;
        }
        CollectionKeys keys = new CollectionKeys(resolver, envelopes, request.waitedOut(), kmsWait);
        try {
            RequestDecision carriedOut = EvaluatedWrites.resume(request, keys, kmsWait);
            if (carriedOut != null) {
                return carriedOut; // the next step of a write the proxy carries out itself
            }
            if (command == null) {
                // the admission gate admits every request while collections are encrypted; one it did not
                // see (the policy changed between the two) is not read here either
                throw Refusal.command("(a request)", "a request the admission gate did not admit (the policy changed "
                        + "while it was read); send it again");
            }
            if (command.legacyHandshake()) {
                databases.examine(command.spec(), request.query().command(), 0, command.database(), p);
                return RequestDecision.PASS;
            }
            return opMsg(request, command, p, keys);
        } catch (KeysPending pending) {
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        } catch (Refusal r) {
            return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), r.error(), r.getMessage()));
        } catch (NotEvaluable e) {
            // met while matching the documents of a write the proxy carries out; its message may quote
            // a value, so it is not repeated (EvaluatedReads.DATA_NOT_EVALUABLE says why)
            return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD,
                    EvaluatedReads.DATA_NOT_EVALUABLE));
        }
    }

    /**
     * An OP_MSG command the admission gate admitted, routed by its row in the command table: on an
     * encrypted collection every argument is examined and the command rewritten, passed or refused
     * as its row says; a command that names no encrypted collection but is sent to a database that
     * holds some (or to admin) has every argument examined against its row too ({@link
     * DatabaseCommands}); anywhere else it passes, its body checked for references to encrypted
     * collections where it can make them. A command the table does not know passes only where its
     * database holds nothing encrypted.
     */
    private RequestDecision opMsg(Request request, Command command, Policy p, CollectionKeys keys) {
        OpMsgView m = request.msg();
        String db = command.database();
        CommandSpec spec = command.spec();
        if (spec == null) {
            if (DatabaseCommands.examines(db, p)) {
                throw unknownCommand(command.name(), db);
            }
            return RequestDecision.PASS; // a database without encrypted collections
        }
        if (spec.scope() == CommandSpec.Scope.NAMESPACES) {
            return command.target() == null ? RequestDecision.PASS
                    : BulkWrites.decide(request, spec, p, keys, contexts, kmsWait);
        }
        CollectionPolicy cp = command.target() == null ? null : p.get(command.target());
        if (cp != null) {
            return onEncrypted(request, spec, cp, p, db, keys);
        }
        String name = command.named();
        if (name != null && (spec.rewriter() == CommandSpec.Rewriter.GET_MORE
                || spec.rewriter() == CommandSpec.Rewriter.KILL_CURSORS)) {
            // a cursor opened on an encrypted collection named from another one
            RequestDecision other = replies.otherNamespace(request, db + "." + name,
                    spec.rewriter() == CommandSpec.Rewriter.GET_MORE);
            if (other != RequestDecision.PASS) {
                return other;
            }
        }
        // Not an encrypted collection, but maybe a way into one, from any database.
        if (spec.crossReferences()) {
            CrossReferences.check(spec.name(), m.body(), p, db, name);
        }
        boolean namesCollection = name != null && spec.scope() != CommandSpec.Scope.SERVER
                && spec.scope() != CommandSpec.Scope.DATABASE && spec.scope() != CommandSpec.Scope.CONNECTION;
        if (!namesCollection && DatabaseCommands.examines(db, p)) {
            databases.examine(spec, m.body(), m.sequenceCount(), db, p);
        }
        return RequestDecision.PASS;
    }

    /**
     * A command on an encrypted collection: refused, or its arguments examined and then passed or
     * rewritten, as its entry says. Anything rewritten waits for the collection's key first.
     */
    private RequestDecision onEncrypted(Request request, CommandSpec spec, CollectionPolicy cp, Policy p, String db,
                                        CollectionKeys keys) {
        if (spec.onEncrypted() == CommandSpec.OnEncrypted.REFUSE) {
            throw Refusal.command(cp.namespace(), spec.name() + " is not supported on an encrypted collection");
        }
        CollectionContext ctx = contexts.of(cp, keys);
        if (EvaluatedReads.evaluates(spec)) {
            try {
                CollatedReads.refuseOnServer(request.msg(), ctx); // under a collation: the proxy compares
                return examinedAndRewritten(request, spec, ctx, p, db, keys);
            } catch (Refusal serverCannot) {
                return evaluated(request, spec, ctx, p, keys, serverCannot); // examines everything again, for the proxy's part
            }
        }
        if (EvaluatedWrites.evaluates(spec)) {
            CollatedWrites.refuse(request.msg().toOpMsg(), ctx); // the server would match envelopes by bytes
            try {
                return examinedAndRewritten(request, spec, ctx, p, db, keys);
            } catch (Refusal serverCannot) {
                if (!EvaluatedWrites.addresses(serverCannot)) {
                    throw serverCannot;
                }
                FieldMasks masks = p.hasAccessRules()
                        ? FieldMasks.of(cp, request.peer().identity(p.identities()), keys) : FieldMasks.NONE;
                return carriedOut(request, spec, ctx, keys, serverCannot, masks);
            }
        }
        return examinedAndRewritten(request, spec, ctx, p, db, keys);
    }

    /** The command's arguments examined for the server, then the command rewritten as its entry says. */
    private RequestDecision examinedAndRewritten(Request request, CommandSpec spec, CollectionContext ctx, Policy p,
                                                 String db, CollectionKeys keys) {
        OpMsgView m = request.msg();
        CollectionPolicy cp = ctx.policy;
        Arguments.examine(spec, m, ctx);
        refuseBadNames(request, ctx.ns());
        if (spec.onEncrypted() == CommandSpec.OnEncrypted.PASS) {
            return RequestDecision.PASS;
        }
        if (spec.rewriter() == CommandSpec.Rewriter.KILL_CURSORS) {
            return replies.killCursors(request, ctx.ns()); // needs no key
        }
        if (!keys.need(cp.keyId())) {
            // its reply needs the key as much as its values do: fetch it before anything is forwarded
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        return rewriters.rewrite(request, spec, ctx, p, db);
    }

    /**
     * A find or count the server cannot evaluate on encrypted fields (a range, a sort): the server
     * is asked for the candidates its part of the filter selects, the proxy evaluates the rest on
     * their plaintext ({@link EvaluatedReads}).
     */
    private RequestDecision evaluated(Request request, CommandSpec spec, CollectionContext ctx, Policy p,
                                      CollectionKeys keys, Refusal serverCannot) {
        RequestDecision waitForKey = examinedWithKey(request, spec, ctx, keys, EvaluatedReads.byProxy(spec));
        if (waitForKey != null) {
            return waitForKey;
        }
        EvaluatedReads.Plan plan = EvaluatedReads.plan(spec, request.msg().toOpMsg(), ctx, serverCannot, ns -> {
            String caseOf = p.databaseDifferingInCase(ns.substring(0, ns.indexOf('.')));
            if (caseOf != null) {
                // as the admission gate refuses such a $db: the server could take it for the policy's database
                throw Refusal.command(ctx.ns(), "an $out or $merge into " + ns + ", whose database differs only in case "
                        + "from '" + caseOf + "', which holds encrypted collections");
            }
            CollectionPolicy target = p.get(ns);
            return target == null ? null : contexts.of(target, keys);
        });
        if (plan.writes() != null && !keys.need(plan.writes().keyId())) {
            // the key its $out or $merge seals with, fetched before anything is read
            return RequestDecision.await(keys.fetchPending(), kmsWait);
        }
        request.expectReply(plan.replyState());
        return RequestDecision.replace(request.encode(plan.command()));
    }

    /**
     * An update or delete the server cannot evaluate on encrypted fields (a range in its filter, an
     * $inc of an encrypted field): carried out by the proxy in steps ({@link EvaluatedWrites}).
     */
    private RequestDecision carriedOut(Request request, CommandSpec spec, CollectionContext ctx, CollectionKeys keys,
                                       Refusal serverCannot, FieldMasks masks) {
        RequestDecision waitForKey = examinedWithKey(request, spec, ctx, keys, EvaluatedWrites.readByProxy(spec));
        if (waitForKey != null) {
            return waitForKey;
        }
        return EvaluatedWrites.start(request, spec, ctx, keys, kmsWait, serverCannot, masks);
    }

    /**
     * Every argument examined again, but those the proxy reads on plaintext; then the collection's
     * key: an await decision while it is not in memory, else null.
     */
    private RequestDecision examinedWithKey(Request request, CommandSpec spec, CollectionContext ctx, CollectionKeys keys,
                                            java.util.Set<String> byProxy) {
        Arguments.examine(spec, request.msg(), ctx, byProxy);
        refuseBadNames(request, ctx.ns());
        return keys.need(ctx.policy.keyId()) ? null : RequestDecision.await(keys.fetchPending(), kmsWait);
    }

    private static Refusal unknownCommand(String cmd, String db) {
        return Refusal.command(db, "the command '" + Arguments.quoted(cmd) + "' is not one the proxy knows; "
                + "on a database with encrypted collections (and on admin) it refuses commands it cannot examine");
    }

    /**
     * A name given twice in one document (which value would the server keep, and which was
     * encrypted?), or a name that is not UTF-8 (Java reads another name than the server sees).
     */
    static void refuseBadNames(Request request, String ns) {
        BsonCursor.NameProblem problem = request.msg().nameProblem();
        if (problem != null) {
            throw new Refusal(ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, ns + ": " + problem.describe()
                    + "; on an encrypted collection the proxy does not guess which field the server would use");
        }
    }

    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        return replies.onReply(reply, state);
    }
}
