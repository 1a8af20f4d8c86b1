package dev.fleproxy.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.rewrite.EncryptionFilter;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.server.Requests;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BSONException;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Fuzz target over reply decryption: a find, aggregate, distinct, findAndModify or count on hr.people
 * or hr.all goes through the real {@link EncryptionFilter}, then a reply (cursor firstBatch, then
 * maybe a getMore's nextBatch; value; values) made of fuzzed documents holding real envelopes (made
 * by the filter itself from inserts), envelopes of other fields or collections, damaged ones and
 * made-up ones, or raw bytes, goes through {@link EncryptionFilter#onReply}. Invariants: no
 * exception but the documented bad-input ones; the reply is passed, or replaced by a well-formed
 * reply with the same ids that is either the decrypted reply or an error with a proxy code; the
 * keys are in memory, so nothing waits for them.
 */
class ReplyDecryptionFuzzTest {
    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;
    private static KeyResolver resolver;
    /** Real envelopes by "collection:path", as the filter wrote them. */
    private static final Map<String, List<BsonBinary>> ENVELOPES = new LinkedHashMap<>();
    private static final List<BsonBinary> ALL_ENVELOPES = new ArrayList<>();

    private static final String[] PIPELINES = {"[]", "[{$match: {}}]", "[{$project: {who: '$ssn', ssn: 1}}]",
        "[{$group: {_id: '$ssn', n: {$sum: 1}}}]", "[{$unwind: '$items'}]", "[{$replaceRoot: {newRoot: '$address'}}]",
        "[{$addFields: {st: '$address.street'}}]", "[{$lookup: {from: 'people', localField: '_id', foreignField: '_id', "
            + "as: 'j'}}]", "[{$facet: {x: [{$match: {}}]}}]", "[{$project: {a: 1, b: 1}}]",
        "[{$sort: {_id: 1}}, {$limit: 5}]", "[{$unionWith: 'all'}]", "[{$project: {c: '$a', a: '$c'}}]",
        "[{$set: {'items.price': '$ssn'}}]", "[{$count: 'n'}]"};
    private static final String[] PROJECTIONS = {"{ssn: 1}", "{address: 0}", "{'items.price': 1}", "{a: 1}",
        "{ssn: 0, a: 0}", "{'address.street': 1, _id: 0}"};
    private static final String[] KEYS = {"ssn", "address.street", "items.price", "name", "a", "b", "items"};
    private static final String[] FIELDS = {"_id", "ssn", "address", "items", "name", "a", "b", "c", "who", "st", "j",
        "x", "n"};

    @BeforeAll
    static void keysAndEnvelopes() {
        resolver = FuzzSupport.resolver();
        resolver.prefetch(List.of(FuzzSupport.AES_KEY, FuzzSupport.ARIA_KEY));
        EncryptionFilter filter = filter();
        collect(filter, "people", "{_id: 1, ssn: '123-45-6789', address: {street: 'Main St', city: 'Oslo'}, "
                + "items: [{price: 5}, {price: 'x'}], name: 'n'}");
        collect(filter, "people", "{_id: 2, ssn: {a: 1}, address: {street: [1, 2]}, items: [{price: {p: 1.5}}]}");
        collect(filter, "all", "{_id: 1, a: 'alpha', b: {c: 1}, c: [1, 2], name: 'n', ssn: 'x'}");
    }

    /** Inserts doc through the filter and keeps the envelopes it wrote. */
    private static void collect(EncryptionFilter filter, String coll, String doc) {
        OpMsg insert = new OpMsg(0, BsonDocument.parse("{insert: '" + coll + "', $db: 'hr', documents: [" + doc + "]}"));
        Request r = Requests.of(new Frame(Unpooled.wrappedBuffer(WireIO.encode(insert, 1, 0))), ALLOC, filter);
        Frame out = ((RequestDecision.Replace) FuzzSupport.gatedThenFiltered(r, filter)).frame();
        BsonDocument stored = OpMsg.parse(out).body().getArray("documents").get(0).asDocument();
        out.release();
        gather(coll, "", stored);
    }

    private static void gather(String coll, String path, BsonValue v) {
        if (v instanceof BsonBinary b && b.getType() == 6) {
            ENVELOPES.computeIfAbsent(coll + ":" + path, k -> new ArrayList<>()).add(b);
            ALL_ENVELOPES.add(b);
        } else if (v instanceof BsonDocument d) {
            d.forEach((k, x) -> gather(coll, path.isEmpty() ? k : path + "." + k, x));
        } else if (v instanceof BsonArray a) {
            a.forEach(x -> gather(coll, path, x));
        }
    }

    @AfterAll
    static void close() {
        resolver.close();
    }

    private static EncryptionFilter filter() {
        return new EncryptionFilter(() -> FuzzSupport.POLICY, resolver, Duration.ofMillis(5000));
    }

    @FuzzTest(maxDuration = "60s")
    void replies(FuzzedDataProvider data) {
        EncryptionFilter filter = filter();
        String coll = data.consumeBoolean() ? "people" : "all";
        int kind = data.consumeInt(0, 5);
        BsonDocument body = switch (kind) {
            case 0, 1 -> {
                BsonDocument b = BsonDocument.parse("{find: '" + coll + "', filter: {}}");
                if (data.consumeBoolean()) {
                    b.append("projection", BsonDocument.parse(data.pickValue(PROJECTIONS)));
                }
                yield b;
            }
            case 2 -> new BsonDocument("aggregate", new BsonString(coll))
                    .append("pipeline", BsonArray.parse(data.pickValue(PIPELINES))).append("cursor", new BsonDocument());
            case 3 -> new BsonDocument("distinct", new BsonString(coll)).append("key", new BsonString(data.pickValue(KEYS)));
            case 4 -> BsonDocument.parse("{findAndModify: '" + coll + "', query: {_id: 1}, update: {$set: {n: 1}}}")
                    .append("new", new org.bson.BsonBoolean(data.consumeBoolean()));
            default -> new BsonDocument("count", new BsonString(coll));
        };
        body.append("$db", new BsonString("hr"));
        Object state = send(filter, body);
        if (state == null) {
            return;
        }
        String batch = kind == 3 ? "values" : kind == 4 ? "value" : "firstBatch";
        long cursorId = replyAndCheck(filter, state, data, coll, batch);
        if (cursorId != 0 && (kind <= 2) && data.consumeBoolean()) {
            Object more = send(filter, new BsonDocument("getMore", new BsonInt64(cursorId))
                    .append("collection", new BsonString(coll)).append("$db", new BsonString("hr")));
            if (more != null) {
                replyAndCheck(filter, more, data, coll, "nextBatch");
            }
        }
    }

    /** Sends a request through the filter; the state it keeps for the reply, or null if refused. */
    private static Object send(EncryptionFilter filter, BsonDocument body) {
        Request r = Requests.of(new Frame(Unpooled.wrappedBuffer(WireIO.encode(new OpMsg(0, body), 7, 0))), ALLOC,
                filter);
        RequestDecision d = FuzzSupport.gatedThenFiltered(r, filter);
        if (d instanceof RequestDecision.Replace rep) {
            rep.frame().release();
        } else if (!(d instanceof RequestDecision.Pass)) {
            return null;
        }
        List<Object> states = Requests.replyStates(r);
        return states.isEmpty() ? null : states.get(0);
    }

    /** Builds a reply, hands it to the filter, checks the decision; the cursor id the reply named. */
    private static long replyAndCheck(EncryptionFilter filter, Object state, FuzzedDataProvider data, String coll,
                                      String batch) {
        long cursorId = 0;
        Frame frame;
        if (data.consumeInt(0, 9) == 0) {
            frame = FuzzSupport.opMsgFrame(9, 7, data.consumeBytes(data.consumeInt(0, 512)));
        } else {
            BsonDocument reply = new BsonDocument();
            BsonValue docs = switch (batch) {
                case "value" -> data.consumeInt(0, 5) == 0 ? BsonNull.VALUE : document(data, coll, 3);
                case "values" -> {
                    BsonArray a = new BsonArray();
                    int n = data.consumeInt(0, 4);
                    for (int i = 0; i < n; i++) {
                        a.add(value(data, coll, data.pickValue(KEYS), 2));
                    }
                    yield a;
                }
                default -> {
                    BsonArray a = new BsonArray();
                    int n = data.consumeInt(0, 4);
                    for (int i = 0; i < n; i++) {
                        a.add(data.consumeInt(0, 15) == 0 ? value(data, coll, "", 1) : document(data, coll, 3));
                    }
                    yield a;
                }
            };
            if (batch.endsWith("Batch")) {
                cursorId = switch (data.consumeInt(0, 3)) {
                    case 0 -> 0;
                    case 1 -> 42;
                    default -> data.consumeLong();
                };
                BsonDocument cursor = new BsonDocument(batch, docs).append("id", data.consumeInt(0, 9) == 0
                        ? new BsonInt32((int) cursorId) : new BsonInt64(cursorId))
                        .append("ns", new BsonString("hr." + coll));
                reply.append("cursor", data.consumeInt(0, 19) == 0 ? new BsonString("x") : cursor);
            } else {
                reply.append(batch, docs);
            }
            switch (data.consumeInt(0, 9)) {
                case 0 -> reply.append("ok", new BsonInt32(0)).append("errmsg", new BsonString("e"))
                        .append("code", new BsonInt32(2));
                case 1 -> { } // no ok
                case 2 -> reply.append("ok", new BsonDouble(1.0)).append("writeErrors", new BsonArray());
                default -> reply.append("ok", new BsonDouble(1.0));
            }
            try {
                frame = new Frame(Unpooled.wrappedBuffer(WireIO.encode(new OpMsg(0, reply), 9, 7)));
            } catch (BSONException e) {
                return 0;
            }
        }
        Reply reply = new Reply(frame, ALLOC);
        ReplyDecision decision;
        try {
            decision = filter.onReply(reply, state);
        } catch (RuntimeException e) {
            FuzzSupport.expectOnlyBadInput(e);
            return 0;
        }
        if (decision instanceof ReplyDecision.Await) {
            fail("the keys are in memory, yet the reply waits for keys");
        } else if (decision instanceof ReplyDecision.Replace replace) {
            Frame out = replace.frame();
            try {
                assertEquals(OpCode.OP_MSG, out.opCode());
                assertEquals(frame.requestId(), out.requestId(), "a replaced reply keeps its ids");
                assertEquals(frame.responseTo(), out.responseTo(), "a replaced reply keeps its ids");
                BsonDocument replaced = OpMsg.parse(out).body();
                if (replaced.containsKey("code") && replaced.isNumber("code")) {
                    int code = replaced.getNumber("code").intValue();
                    if (code >= FuzzSupport.PROXY_CODES_FROM && code <= FuzzSupport.PROXY_CODES_TO) {
                        assertEquals(0.0, replaced.getNumber("ok").doubleValue(), replaced.toJson());
                        assertTrue(replaced.isString("errmsg"), replaced.toJson());
                    }
                }
            } finally {
                out.release();
            }
        }
        return cursorId;
    }

    /** A reply document: _id, policy and other fields holding envelopes, damaged envelopes and other values. */
    private static BsonDocument document(FuzzedDataProvider data, String coll, int depth) {
        BsonDocument doc = new BsonDocument("_id", new BsonInt32(data.consumeInt(0, 3)));
        int n = data.consumeInt(0, 5);
        for (int i = 0; i < n; i++) {
            String k = data.pickValue(FIELDS);
            doc.put(k, value(data, coll, k, depth));
        }
        return doc;
    }

    private static BsonValue value(FuzzedDataProvider data, String coll, String path, int depth) {
        switch (data.consumeInt(0, 9)) {
            case 0, 1, 2 -> {
                List<BsonBinary> own = ENVELOPES.get(coll + ":" + path);
                return own != null ? own.get(data.consumeInt(0, own.size() - 1)) : anyEnvelope(data);
            }
            case 3 -> {
                return anyEnvelope(data);
            }
            case 4 -> {
                return damaged(data, anyEnvelope(data));
            }
            case 5 -> {
                // made up: the format byte, then whatever the fuzzer says
                byte[] rest = data.consumeBytes(data.consumeInt(0, 80));
                byte[] env = new byte[rest.length + 1];
                env[0] = (byte) 0x82;
                System.arraycopy(rest, 0, env, 1, rest.length);
                return new BsonBinary((byte) (data.consumeBoolean() ? 6 : 0), env);
            }
            case 6 -> {
                if (depth <= 0) {
                    return new BsonString(data.consumeString(8));
                }
                BsonDocument sub = new BsonDocument();
                int n = data.consumeInt(0, 3);
                for (int i = 0; i < n; i++) {
                    String k = data.pickValue(new String[] {"street", "city", "price", "c", "p", "ssn"});
                    sub.put(k, value(data, coll, path.isEmpty() ? k : path + "." + k, depth - 1));
                }
                return sub;
            }
            case 7 -> {
                if (depth <= 0) {
                    return new BsonInt32(data.consumeInt());
                }
                BsonArray a = new BsonArray();
                int n = data.consumeInt(0, 3);
                for (int i = 0; i < n; i++) {
                    a.add(value(data, coll, path, depth - 1));
                }
                return a;
            }
            case 8 -> {
                return new BsonInt32(data.consumeInt());
            }
            default -> {
                return new BsonString(data.consumeString(12));
            }
        }
    }

    private static BsonBinary anyEnvelope(FuzzedDataProvider data) {
        return ALL_ENVELOPES.get(data.consumeInt(0, ALL_ENVELOPES.size() - 1));
    }

    /** An envelope with a byte changed, cut short, grown, or under another subtype. */
    private static BsonBinary damaged(FuzzedDataProvider data, BsonBinary env) {
        byte[] b = env.getData().clone();
        byte subtype = env.getType();
        switch (data.consumeInt(0, 4)) {
            case 0 -> {
                int i = data.consumeInt(0, b.length - 1);
                b[i] = data.consumeByte();
            }
            case 1 -> b = java.util.Arrays.copyOf(b, data.consumeInt(0, b.length));
            case 2 -> {
                byte[] extra = data.consumeBytes(data.consumeInt(1, 32));
                byte[] grown = java.util.Arrays.copyOf(b, b.length + extra.length);
                System.arraycopy(extra, 0, grown, b.length, extra.length);
                b = grown;
            }
            case 3 -> subtype = (byte) data.consumeInt(0, 8);
            default -> {
                int i = data.consumeInt(0, Math.min(b.length - 1, 20)); // the header: format, suite, key id
                b[i] ^= (byte) (1 << data.consumeInt(0, 7));
            }
        }
        return new BsonBinary(subtype, b);
    }
}
