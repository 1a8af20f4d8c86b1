package dev.fleproxy.admission;

import dev.fleproxy.policy.NamespaceNames;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Command;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpQuery;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * The first filter while any collection is encrypted: what goes further is only what the proxy has
 * read whole and knows (docs/security-model.md, "The admission gate"). It admits
 *
 * <ul>
 *   <li>OP_MSG whose every document is well-formed BSON all the way down, whose top level names
 *       nothing twice (in the body, between the body and a document sequence, in two sequences),
 *       with a {@code $db} that is a database name MongoDB can hold and not a policy database's
 *       name in another case, and whose own namespace (the collection of a collection command,
 *       getMore's {@code collection}, an admin command's "db.coll", bulkWrite's nsInfo) is one too;
 *   <li>OP_QUERY for the handshake only: hello or isMaster on {@code admin.$cmd}, with the
 *       handshake's own fields (those the command table's hello row lists, and flags: single values)
 *       and nothing else, no {@code $db} above all.
 * </ul>
 *
 * A message with malformed BSON anywhere is bad input: it closes the connection, with one
 * rate-limited line, like any malformed message. Everything else is refused with a MongoDB error
 * reply: the legacy write opcodes, which get no
 * reply by design, close the connection; any other opcode (OP_COMMAND, a client's OP_REPLY, one
 * nobody defined) is answered and the connection closed. OP_COMPRESSED never gets here (the proxy
 * never negotiates compression, and the session closes a connection that sends it). What it admits
 * is handed on as a {@link Command}, which the filters after it decide by; with no collection
 * encrypted the gate steps aside and the proxy relays.
 */
public final class AdmissionGate implements MessageFilter {
    /**
     * OP_UPDATE, OP_INSERT, OP_GET_MORE, OP_DELETE, OP_KILL_CURSORS: drivers since MongoDB 3.6 never
     * send them; four get no reply by design, so a connection that sends one is closed unanswered.
     */
    private static final Set<Integer> LEGACY_OPCODES = Set.of(2001, 2002, 2005, 2006, 2007);
    /** A legacy hello wrapped the way mongos expects a read preference: {$query: {isMaster: 1}, $readPreference: …}. */
    private static final Set<String> QUERY_WRAPPING = Set.of("$query", "$readPreference");

    private final Supplier<Policy> policy;

    public AdmissionGate(Supplier<Policy> policy) {
        this.policy = policy;
    }

    @Override
    public RequestDecision onRequest(Request request) {
        Policy p = policy.get();
        if (p.isEmpty()) {
            return RequestDecision.PASS;
        }
        int op = request.opCode();
        if (op == OpCode.OP_MSG || op == OpCode.OP_QUERY) {
            Admission a = op == OpCode.OP_MSG ? opMsg(request.msg(), p) : handshake(request, p);
            if (a.refusal != null) {
                return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), ProxyError.UNSUPPORTED_COMMAND,
                        a.refusal));
            }
            request.admit(a.command, p);
            if (a.command.target() != null) {
                request.policyCollection(a.command.target());
            }
            return RequestDecision.PASS;
        }
        if (LEGACY_OPCODES.contains(op)) {
            return RequestDecision.close("legacy opcode " + OpCode.name(op) + " is not supported while collections "
                    + "are encrypted (drivers since MongoDB 3.6 use OP_MSG)");
        }
        String why = OpCode.name(op) + " is not a message the proxy reads (only OP_MSG, and OP_QUERY for the "
                + "handshake) while collections are encrypted";
        return RequestDecision.refuseAndClose(ErrorReplies.replyTo(request.frame(), ProxyError.UNSUPPORTED_COMMAND,
                why), why);
    }

    /** What the gate made of a request: the command it admits, or why it refuses it. */
    private record Admission(Command command, String refusal) {
        static Admission refused(String why) {
            return new Admission(null, why);
        }
    }

    // ---- OP_MSG ---------------------------------------------------------------------------------

    private static Admission opMsg(OpMsgView m, Policy p) {
        BsonCursor.NameProblem names = m.topLevelNameProblem();
        if (names != null) {
            return Admission.refused(names.describe() + " at the top of a command; the proxy refuses commands it "
                    + "cannot read as the server would while collections are encrypted");
        }
        String name = m.commandName();
        CommandSpec spec = CommandTable.get(name);
        String own = spec == null ? name : spec.scope() == CommandSpec.Scope.CURSOR ? "collection" : name;
        // one pass over the body (this runs for every message): $db, the own element, the sequences'
        // names, every value checked well-formed on the way. Malformed BSON anywhere is bad input: the
        // BSONException closes this connection with one rate-limited line, as any malformed message does.
        String[] wanted = new String[2 + m.sequenceCount()];
        wanted[0] = "$db";
        wanted[1] = own;
        for (int i = 0; i < m.sequenceCount(); i++) {
            wanted[2 + i] = m.sequenceIdentifier(i);
        }
        OpMsgView.TopLevel top = m.topLevel(wanted);
        m.checkSequencesWellFormed();
        for (int i = 0; i < m.sequenceCount(); i++) {
            String id = wanted[2 + i];
            if (notUtf8(id)) {
                return Admission.refused("a document sequence whose identifier is not valid UTF-8");
            }
            boolean twice = top.present()[2 + i] || id.equals("$db") || id.equals(own);
            for (int j = 0; j < i && !twice; j++) {
                twice = wanted[2 + j].equals(id);
            }
            if (twice) {
                return Admission.refused("the field '" + ErrorReplies.quoted(id) + "' is given twice (in the body and "
                        + "as a document sequence, or as two sequences); the server merges them into one command, so "
                        + "the proxy cannot tell which it would use");
            }
        }
        if (name.isEmpty()) {
            return Admission.refused("a message whose body names no command");
        }
        String db = top.strings()[0];
        if (db == null) {
            return Admission.refused("the command '" + ErrorReplies.quoted(name) + "' " + (top.present()[0]
                    ? "has a $db that is not a string" : "names no database ($db)")
                    + "; every OP_MSG command must (the proxy decides by it)");
        }
        if (notUtf8(db)) {
            return Admission.refused("a $db that is not valid UTF-8");
        }
        String problem = database(db, p);
        String named = spec == null ? null : top.strings()[1];
        if (problem == null && spec != null) {
            problem = ownNamespace(spec, named, m, p);
        }
        if (problem != null) {
            return Admission.refused(problem);
        }
        return new Admission(new Command(name, spec, db, named, spec == null ? null : target(spec, named, m, db, p),
                false), null);
    }

    /**
     * The encrypted collection the command works on, by how its row says it names one: a collection
     * of $db, getMore's collection, an admin command's "db.coll" (a bare name: one of $db), bulkWrite's
     * first encrypted namespace; a server or database command names none, but one whose element is
     * the name of an encrypted collection anyway is taken to be about it (its target cannot be shown
     * to be plain).
     */
    private static String target(CommandSpec spec, String name, OpMsgView m, String db, Policy p) {
        if (spec.scope() == CommandSpec.Scope.NAMESPACES) {
            for (org.bson.BsonValue info : nsInfo(m)) {
                if (info.isDocument() && info.asDocument().isString("ns") && p.get(info.asDocument().getString("ns")
                        .getValue()) != null) {
                    return info.asDocument().getString("ns").getValue();
                }
            }
            return null;
        }
        if (name == null) {
            return null;
        }
        boolean dotted = name.indexOf('.') > 0;
        dev.fleproxy.policy.CollectionPolicy cp = switch (spec.scope()) {
            case COLLECTION, CURSOR -> p.get(db, name);
            case NAMESPACE -> dotted ? p.get(name) : p.get(db, name);
            default -> p.get(db, name) != null ? p.get(db, name) : dotted ? p.get(name) : null;
        };
        return cp == null ? null : cp.namespace();
    }

    /**
     * Whether a name read from the wire was not valid UTF-8: Java decodes what is not into U+FFFD, and
     * would then decide by another name than the server sees. (A name that really holds U+FFFD is
     * refused too: no database or collection needs one.)
     */
    private static boolean notUtf8(String name) {
        return name.indexOf('\uFFFD') >= 0;
    }

    /** What is wrong with a database name a request carries: MongoDB's rules, then the policy's spelling. */
    private static String database(String db, Policy p) {
        String problem = NamespaceNames.databaseProblem(db);
        if (problem != null) {
            return problem;
        }
        String policyDb = p.databaseDifferingInCase(db);
        return policyDb == null ? null : "the database '" + db + "' differs only in case from '" + policyDb + "', "
                + "which holds encrypted collections; MongoDB does not hold both, and the proxy does not guess which "
                + "the server would use";
    }

    private static String namespace(String ns, Policy p) {
        String problem = NamespaceNames.namespaceProblem(ns);
        return problem != null ? problem : database(ns.substring(0, ns.indexOf('.')), p);
    }

    /** The namespace the command's row says it works on, held to the same rules as $db. */
    private static String ownNamespace(CommandSpec spec, String name, OpMsgView m, Policy p) {
        if (name != null && notUtf8(name)) {
            return "the command " + spec.name() + " on a collection whose name is not valid UTF-8";
        }
        return switch (spec.scope()) {
            case COLLECTION, CURSOR -> name != null ? collection(name) : null;
            case NAMESPACE -> name != null ? namespace(name, p) : null;
            case NAMESPACES -> bulkNamespaces(m, p);
            default -> null;
        };
    }

    private static String collection(String name) {
        return NamespaceNames.collectionProblem(name);
    }

    /** bulkWrite's nsInfo, in the body or as a sequence (never both: the gate refuses a name given twice). */
    private static String bulkNamespaces(OpMsgView m, Policy p) {
        for (org.bson.BsonValue info : nsInfo(m)) {
            if (info.isDocument() && info.asDocument().isString("ns")) {
                String problem = namespace(info.asDocument().getString("ns").getValue(), p);
                if (problem != null) {
                    return problem;
                }
            }
        }
        return null;
    }

    /** bulkWrite's nsInfo entries, from the body or a sequence (never both: the gate refuses a name given twice). */
    private static java.util.List<org.bson.BsonValue> nsInfo(OpMsgView m) {
        java.util.List<org.bson.BsonValue> entries = new java.util.ArrayList<>();
        if (m.body().isArray("nsInfo")) {
            entries.addAll(m.body().getArray("nsInfo"));
        }
        for (dev.fleproxy.wire.DocumentSequence s : m.sequences()) {
            if (s.identifier().equals("nsInfo")) {
                entries.addAll(s.documents());
            }
        }
        return entries;
    }

    // ---- OP_QUERY: the handshake only --------------------------------------------------------------

    private static Admission handshake(Request request, Policy p) {
        OpQuery q = request.query();
        if (!q.fullCollectionName().equals("admin.$cmd")) {
            return Admission.refused("OP_QUERY on '" + ErrorReplies.quoted(q.fullCollectionName()) + "': while collections are "
                    + "encrypted OP_QUERY is only for the handshake (hello or isMaster on admin.$cmd); use a driver "
                    + "that speaks OP_MSG (MongoDB 3.6+)");
        }
        if (BsonCursor.nameProblem(queryBytes(request), 0, queryBytes(request).length, true) != null) {
            return Admission.refused("a handshake that names a field twice or a name that is not valid UTF-8");
        }
        BsonDocument wrapper = q.query();
        BsonDocument cmd = q.command();
        if (cmd != wrapper && !QUERY_WRAPPING.containsAll(wrapper.keySet())) {
            return Admission.refused("a handshake wrapped in $query with other fields than $readPreference");
        }
        String name = cmd.isEmpty() ? "" : cmd.getFirstKey();
        if (!CommandTable.isHello(name)) {
            return Admission.refused("OP_QUERY command '" + ErrorReplies.quoted(name) + "': while collections are encrypted "
                    + "OP_QUERY is only for the handshake (hello or isMaster); use a driver that speaks OP_MSG");
        }
        CommandSpec spec = CommandTable.get(name);
        for (java.util.Map.Entry<String, org.bson.BsonValue> field : cmd.entrySet()) {
            String f = field.getKey();
            boolean flag = spec.others() != null && !field.getValue().isDocument() && !field.getValue().isArray();
            if (!f.equals(name) && (f.equals("$db") || spec.arg(f) == null && !flag)) {
                return Admission.refused("the handshake field '" + ErrorReplies.quoted(f) + "' is not one the proxy knows; "
                        + "over OP_QUERY only the handshake's own fields pass (and flags, single values)");
            }
        }
        return new Admission(new Command(name, spec, "admin", null, null, true), null);
    }

    /** The legacy query document's bytes, as they arrived (its names checked where the decoder would keep one). */
    private static byte[] queryBytes(Request request) {
        io.netty.buffer.ByteBuf buf = request.frame().content();
        int start = buf.readerIndex() + 16 + 4;
        int nul = buf.indexOf(start, buf.readerIndex() + request.frame().length(), (byte) 0);
        int docStart = nul + 1 + 8;
        byte[] doc = new byte[buf.getIntLE(docStart)];
        buf.getBytes(docStart, doc);
        return doc;
    }
}
