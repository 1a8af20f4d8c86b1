package dev.fleproxy.bench.pipeline;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.rewrite.EncryptionFilter;
import dev.fleproxy.server.Reply;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.server.Requests;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the encryption filter costs per operation without sockets: the messages of the overhead
 * benchmark (the Java driver's insert of 10 × 100-byte fields, its find by _id, and the reply to
 * that find) through {@link EncryptionFilter}, on a collection encrypted with AES-GCM and on one
 * without policy; beside them the JDK's AES-GCM alone on the same ten values each way
 * ({@code sealTenFieldsJdk}, {@code openTenFieldsJdk}: what the filter's encrypted figures would be
 * if it did nothing but the cipher). Run with {@code -prof gc} for allocation per operation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PipelineBenchmark {
    private static final UUID KEY = UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0");
    private static final Policy POLICY = PolicyParser.parse(Map.of("bench.aes", Map.of("key", KEY.toString(),
            "fields", "*")), 0, "bench");

    private KeyResolver resolver;
    private EncryptionFilter filter;
    private dev.fleproxy.admission.AdmissionGate gate;
    private byte[] insertAes;
    private byte[] insertPlain;
    private byte[] findAes;
    private byte[] findPlain;
    private byte[] encryptedReply;
    private Object replyState;
    private javax.crypto.Cipher jdkGcm;
    private javax.crypto.spec.SecretKeySpec jdkKey;
    private final byte[][] values = new byte[10][105];
    private final byte[][] sealed = new byte[10][];
    private final byte[] aad = new byte[36];
    private final byte[] nonces = new byte[12 * 4096];
    private int nonce;
    private final int[] nonceAt = new int[10];
    /** What openTenFieldsJdk opens: the set-up's seal, kept apart from later seals. */
    private byte[][] openable;
    private int[] openNonceAt;

    private static OpMsg insert(String coll) {
        BsonDocument doc = new BsonDocument("_id", new BsonInt64(12345));
        for (int f = 0; f < 10; f++) {
            char[] v = new char[100];
            Arrays.fill(v, (char) ('a' + f));
            doc.append("field" + f, new BsonString(new String(v)));
        }
        BsonDocument body = new BsonDocument("insert", new BsonString(coll)).append("ordered", BsonBoolean.TRUE)
                .append("$db", new BsonString("bench")).append("lsid", new BsonDocument("id",
                        new BsonBinary(UUID.randomUUID())));
        return new OpMsg(0, body, List.of(new DocumentSequence("documents", List.of(doc))));
    }

    private static OpMsg find(String coll) {
        return new OpMsg(0, new BsonDocument("find", new BsonString(coll))
                .append("filter", new BsonDocument("_id", new BsonInt64(12345))).append("limit", new BsonInt32(1))
                .append("singleBatch", BsonBoolean.TRUE).append("$db", new BsonString("bench"))
                .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID()))));
    }

    @Setup(Level.Trial)
    public void setUp() {
        resolver = new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                byte[] k = new byte[32];
                Arrays.fill(k, (byte) 3);
                return new ResolvedKey(new DataKey(id, CipherAlgorithm.AES, k), KeyState.ACTIVE, "1", Instant.now());
            }

            @Override
            public String describe() {
                return "bench keys";
            }
        }, KeyResolver.Settings.DEFAULT);
        resolver.prefetch(List.of(KEY));
        filter = new EncryptionFilter(() -> POLICY, resolver, Duration.ofMillis(5000));
        gate = new dev.fleproxy.admission.AdmissionGate(() -> POLICY);
        insertAes = WireIO.encode(insert("aes"), 7, 0);
        insertPlain = WireIO.encode(insert("plain"), 7, 0);
        findAes = WireIO.encode(find("aes"), 7, 0);
        findPlain = WireIO.encode(find("plain"), 7, 0);
        // the stored document, as the backend returns it in the find's reply
        Request r = Requests.admitted(insert("aes"), filter, POLICY);
        RequestDecision.Replace d = (RequestDecision.Replace) filter.onRequest(r);
        BsonDocument stored = OpMsg.parse(d.frame()).sequences().get(0).documents().get(0);
        d.frame().release();
        encryptedReply = WireIO.encode(new OpMsg(0, new BsonDocument("cursor", new BsonDocument("firstBatch",
                new BsonArray(List.<BsonValue>of(stored))).append("id", new BsonInt64(0))
                .append("ns", new BsonString("bench.aes"))).append("ok", new BsonInt32(1))), 8, 7);
        Request f = Requests.admitted(find("aes"), filter, POLICY);
        filter.onRequest(f);
        replyState = Requests.replyStates(f).get(0);
        try {
            jdkGcm = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) 3);
        jdkKey = new javax.crypto.spec.SecretKeySpec(k, "AES");
        new java.security.SecureRandom().nextBytes(nonces);
        sealTenFieldsJdk();
        openable = sealed.clone();
        openNonceAt = nonceAt.clone();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        resolver.close();
    }

    private static Request request(byte[] bytes) {
        return new Request(new Frame(Unpooled.wrappedBuffer(bytes)), ByteBufAllocator.DEFAULT);
    }

    /** The admission gate, then the encryption filter, as the session runs them. */
    private RequestDecision through(Request r) {
        RequestDecision admitted = gate.onRequest(r);
        return admitted == RequestDecision.PASS ? filter.onRequest(r) : admitted;
    }

    private static Object release(Request r, RequestDecision d) {
        if (d instanceof RequestDecision.Replace rep) {
            rep.frame().release();
        }
        r.frame().release();
        return d;
    }

    @Benchmark
    public Object insertEncrypted() {
        Request r = request(insertAes);
        return release(r, through(r));
    }

    @Benchmark
    public Object insertPlain() {
        Request r = request(insertPlain);
        return release(r, through(r));
    }

    @Benchmark
    public Object findEncrypted() {
        Request r = request(findAes);
        return release(r, through(r));
    }

    @Benchmark
    public Object findPlain() {
        Request r = request(findPlain);
        return release(r, through(r));
    }

    @Benchmark
    public Object findReplyDecrypted() {
        Reply reply = new Reply(new Frame(Unpooled.wrappedBuffer(encryptedReply)), ByteBufAllocator.DEFAULT);
        ReplyDecision d = filter.onReply(reply, replyState);
        if (d instanceof ReplyDecision.Replace rep) {
            rep.frame().release();
        }
        reply.frame().release();
        return d;
    }

    /** The JDK's AES-GCM alone: ten 105-byte values (BSON strings of 100 characters), 36 bytes of associated data each. */
    @Benchmark
    public Object sealTenFieldsJdk() {
        try {
            for (int f = 0; f < values.length; f++) {
                nonce = (nonce + 12) % nonces.length; // distinct from the previous seal's, as the JDK requires
                nonceAt[f] = nonce;
                jdkGcm.init(javax.crypto.Cipher.ENCRYPT_MODE, jdkKey,
                        new javax.crypto.spec.GCMParameterSpec(128, nonces, nonce, 12));
                jdkGcm.updateAAD(aad);
                sealed[f] = jdkGcm.doFinal(values[f]);
            }
            return sealed;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Opens the ten values the set-up's {@link #sealTenFieldsJdk} sealed. */
    @Benchmark
    public Object openTenFieldsJdk() {
        try {
            long n = 0;
            for (int f = 0; f < values.length; f++) {
                jdkGcm.init(javax.crypto.Cipher.DECRYPT_MODE, jdkKey,
                        new javax.crypto.spec.GCMParameterSpec(128, nonces, openNonceAt[f], 12));
                jdkGcm.updateAAD(aad);
                n += jdkGcm.doFinal(openable[f]).length;
            }
            return n;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
