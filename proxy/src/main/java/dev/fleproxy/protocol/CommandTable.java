package dev.fleproxy.protocol;

import static dev.fleproxy.protocol.ArgKind.ARRAY_FILTERS;
import static dev.fleproxy.protocol.ArgKind.BOUNDS;
import static dev.fleproxy.protocol.ArgKind.BULK_OPERATIONS;
import static dev.fleproxy.protocol.ArgKind.COMMAND;
import static dev.fleproxy.protocol.ArgKind.COLLATION;
import static dev.fleproxy.protocol.ArgKind.COMMENT;
import static dev.fleproxy.protocol.ArgKind.CONFIGURATION;
import static dev.fleproxy.protocol.ArgKind.CONSTANTS;
import static dev.fleproxy.protocol.ArgKind.CURSOR_IDS;
import static dev.fleproxy.protocol.ArgKind.DELETE_STATEMENTS;
import static dev.fleproxy.protocol.ArgKind.DISTINCT_KEY;
import static dev.fleproxy.protocol.ArgKind.DOCUMENTS;
import static dev.fleproxy.protocol.ArgKind.DRIVER_METADATA;
import static dev.fleproxy.protocol.ArgKind.FILTER;
import static dev.fleproxy.protocol.ArgKind.INDEX;
import static dev.fleproxy.protocol.ArgKind.INDEX_SPECS;
import static dev.fleproxy.protocol.ArgKind.KEY_PATTERN;
import static dev.fleproxy.protocol.ArgKind.LET;
import static dev.fleproxy.protocol.ArgKind.METADATA_FILTER;
import static dev.fleproxy.protocol.ArgKind.NAMES;
import static dev.fleproxy.protocol.ArgKind.NAMESPACE;
import static dev.fleproxy.protocol.ArgKind.NAMESPACES;
import static dev.fleproxy.protocol.ArgKind.OPTION;
import static dev.fleproxy.protocol.ArgKind.PIPELINE;
import static dev.fleproxy.protocol.ArgKind.PROJECTION;
import static dev.fleproxy.protocol.ArgKind.SETTINGS;
import static dev.fleproxy.protocol.ArgKind.SETTINGS_LIST;
import static dev.fleproxy.protocol.ArgKind.SORT;
import static dev.fleproxy.protocol.ArgKind.STORED_FILTER;
import static dev.fleproxy.protocol.ArgKind.UPDATE;
import static dev.fleproxy.protocol.ArgKind.UPDATE_STATEMENTS;
import static dev.fleproxy.protocol.ArgKind.VIEW;

import static dev.fleproxy.protocol.CommandSpecs.arg;
import static dev.fleproxy.protocol.CommandSpecs.configuration;
import static dev.fleproxy.protocol.CommandSpecs.option;
import static dev.fleproxy.protocol.CommandSpecs.sequence;
import static dev.fleproxy.protocol.CommandSpecs.settings;

import dev.fleproxy.protocol.CommandSpec.OnEncrypted;
import dev.fleproxy.protocol.CommandSpecs.Builder;
import dev.fleproxy.protocol.CommandSpec.Rewriter;
import dev.fleproxy.protocol.CommandSpec.Scope;
import java.util.List;
import java.util.Set;

/**
 * The one place that knows the commands the proxy forwards while collections are encrypted: every
 * command of MongoDB 8.0's command list (and the legacy names drivers and tools still send), how
 * it names its namespace, and for those it forwards on an encrypted collection every argument
 * they may carry, with what each holds ({@link ArgKind}) and so how it is examined.
 * {@code rewrite.EncryptionFilter} decides by it, {@code server.HandshakeFilter} finds the
 * handshake in it, and the metrics take their {@code command} label values from it.
 *
 * <p>On an encrypted collection, a command not in this table, an argument its entry does not
 * name, or a command whose entry says REFUSE is refused with 9720011: nothing the proxy has not
 * examined reaches the server. Arguments follow the MongoDB 8.0 command reference, the generic
 * ones (sessions, transactions, read and write concern, API version, comment) included; the
 * server's internal arguments (those mongos adds for shards) are not, since drivers do not send them.
 */
public final class CommandTable {
    /** Arguments every command may carry (the command reference's generic arguments). */
    private static final List<Arg> GENERIC = List.of(
            arg("$db", NAMESPACE),
            settings("lsid", option("id"), option("uid"), option("txnNumber"), option("txnUUID")),
            option("txnNumber"), option("autocommit"), option("startTransaction"), option("txnRetryCounter"),
            settings("$clusterTime", option("clusterTime"), settings("signature", option("hash"), option("keyId"))),
            settings("readConcern", option("level"), option("afterClusterTime"), configuration("afterOpTime"),
                    option("atClusterTime"), option("provenance")),
            settings("writeConcern", option("w"), option("j"), option("wtimeout"), option("fsync"),
                    option("provenance")),
            settings("$readPreference", option("mode"), configuration("tags"), option("maxStalenessSeconds"),
                    configuration("hedge")),
            option("maxTimeMS"), option("apiVersion"), option("apiStrict"), option("apiDeprecationErrors"),
            arg("comment", COMMENT));

    /** The table: every command's spec by every name it has. */
    private static final CommandSpecs SPECS = new CommandSpecs(GENERIC);

    private static final Arg CURSOR = settings("cursor", option("batchSize"));
    /**
     * The profiler's filter (profile, setProfilingFilterGlobally): over the fields of its entries
     * that hold no command and no document (command, originatingCommand and execStats do).
     */
    private static final Arg PROFILER_FILTER = arg("filter", METADATA_FILTER, option("op"), option("ns"),
            option("millis"), option("ts"), option("client"), option("appName"), option("user"),
            configuration("allUsers"), option("nreturned"), option("keysExamined"), option("docsExamined"),
            option("planSummary"), option("planningTimeMicros"), option("responseLength"), option("numYield"),
            option("nMatched"), option("nModified"), option("ninserted"), option("ndeleted"), option("nUpserted"),
            option("keysInserted"), option("keysDeleted"), option("writeConflicts"), option("hasSortStage"),
            option("usedDisk"), option("fromMultiPlanner"), option("fromPlanCache"), option("replanned"),
            option("replanReason"), option("queryHash"), option("planCacheShapeHash"), option("planCacheKey"),
            option("queryShapeHash"), option("cursorid"), option("cursorExhausted"), option("protocol"),
            configuration("locks"), configuration("flowControl"), configuration("storage"),
            option("durationMillis"), option("cpuNanos"), option("workingMillis"), option("isFromUserConnection"),
            option("errCode"), option("errName"));
    /** What the server says of its operations (currentOp, $currentOp): no field that holds a command or document. */
    private static final Arg OPERATIONS = arg("filter", METADATA_FILTER, option("type"), option("host"), option("desc"),
            option("connectionId"), option("client"), option("client_s"), option("appName"),
            configuration("clientMetadata"), option("active"), option("currentOpTime"),
            configuration("effectiveUsers"), configuration("runBy"), option("threaded"), option("opid"),
            configuration("lsid"), configuration("transaction"), option("secs_running"),
            option("microsecs_running"), option("op"), option("ns"), option("planSummary"),
            option("prepareReadConflicts"), option("writeConflicts"), configuration("locks"),
            option("waitingForLock"), option("msg"), configuration("progress"), option("killPending"),
            option("numYields"), option("dataThroughputLastSecond"), option("dataThroughputAverage"),
            option("waitingForFlowControl"), configuration("flowControlStats"), configuration("lockStats"),
            configuration("waitingForLatch"), configuration("queues"), configuration("currentQueue"),
            option("redacted"), option("isFromUserConnection"));

    /** A collation's settings (the command reference's collation document), each a single value. */
    private static final Arg COLLATION_SPEC = arg("collation", COLLATION, option("locale"), option("caseLevel"),
            option("caseFirst"), option("strength"), option("numericOrdering"), option("alternate"),
            option("maxVariable"), option("normalization"), option("backwards"), option("version"));

    /**
     * The stages that start a database-level aggregate ({@code aggregate: 1}) the proxy examines on
     * a database with encrypted collections (and on admin), each with the fields of the records it
     * returns (what a later $match, $sort or $project may name). $changeStream is not among them:
     * its events would carry the encrypted collections' documents.
     */
    private static final java.util.Map<String, Arg> DATABASE_STAGES = java.util.Map.of(
            "$currentOp", OPERATIONS,
            "$listLocalSessions", arg("sessions", METADATA_FILTER, configuration("_id"), option("lastUse"),
                    configuration("user")),
            "$querySettings", arg("settings", METADATA_FILTER, option("queryShapeHash"), configuration("settings"),
                    configuration("representativeQuery"), configuration("debugQueryShape")),
            "$listSampledQueries", arg("samples", METADATA_FILTER, option("ns"), option("collectionUuid"),
                    option("sampleId"), option("cmdName"), configuration("cmd"), option("expireAt")),
            "$listClusterCatalog", arg("catalog", METADATA_FILTER, option("db"), option("ns"), option("name"),
                    option("type"), configuration("options"), configuration("info"), configuration("idIndex"),
                    configuration("shards"), option("tracked"), option("sharded"), option("balancingEnabled"),
                    configuration("shardKey")),
            "$shardedDataDistribution", arg("distribution", METADATA_FILTER, option("ns"), configuration("shards")));

    static {
        crud();
        collections();
        sharding();
        connection();
        server();
        database();
    }

    private CommandTable() {
    }

    /** The command with this name (canonical or alias), or null if the proxy does not know it. */
    public static CommandSpec get(String name) {
        return SPECS.get(name);
    }

    /** Every command, each once (aliases map to their command). */
    public static List<CommandSpec> all() {
        return SPECS.all();
    }

    /** Every name the table knows, aliases included. */
    public static Set<String> names() {
        return SPECS.names();
    }

    /**
     * A stage that may start a database-level aggregate on a database with encrypted collections,
     * with the fields of the records it returns; null for any other ($documents and $changeStream
     * are decided by their own rules).
     */
    public static Arg databaseStage(String name) {
        return DATABASE_STAGES.get(name);
    }

    /** The handshake, in its three spellings; its replies are rewritten (server.HelloRewriter). */
    public static boolean isHello(String name) {
        CommandSpec spec = name == null ? null : SPECS.get(name);
        return spec != null && (spec.name().equals("hello") || spec.name().equals("isMaster"));
    }

    /** Handshake or connection-level: passes every filter that is about collections. */
    public static boolean isConnectionLevel(String name) {
        CommandSpec spec = name == null ? null : SPECS.get(name);
        return spec != null && spec.scope() == Scope.CONNECTION;
    }

    // ---- the commands ------------------------------------------------------------------------

    /** Reading and writing documents: what the proxy rewrites. */
    private static void crud() {
        collection("find", Rewriter.FIND).labelled().args(arg("filter", FILTER), arg("sort", SORT),
                arg("projection", PROJECTION), arg("hint", INDEX), option("skip"), option("limit"),
                option("batchSize"), option("singleBatch"), option("returnKey"), option("showRecordId"),
                option("tailable"), option("oplogReplay"), option("noCursorTimeout"), option("awaitData"),
                option("allowPartialResults"), option("allowDiskUse"), arg("min", BOUNDS), arg("max", BOUNDS),
                COLLATION_SPEC, arg("let", LET));
        collection("insert", Rewriter.INSERT).labelled().args(sequence("documents", DOCUMENTS), option("ordered"),
                option("bypassDocumentValidation"));
        collection("update", Rewriter.UPDATE).labelled().args(sequence("updates", UPDATE_STATEMENTS,
                        arg("q", FILTER), arg("u", UPDATE), arg("c", CONSTANTS), option("upsert"), option("multi"),
                        arg("arrayFilters", ARRAY_FILTERS), arg("hint", INDEX), COLLATION_SPEC,
                        arg("sort", SORT)),
                option("ordered"), option("bypassDocumentValidation"), arg("let", LET));
        collection("delete", Rewriter.DELETE).labelled().args(sequence("deletes", DELETE_STATEMENTS,
                        arg("q", FILTER), option("limit"), arg("hint", INDEX), COLLATION_SPEC),
                option("ordered"), arg("let", LET));
        collection("findAndModify", Rewriter.FIND_AND_MODIFY).alias("findandmodify").labelled().args(
                arg("query", FILTER), arg("sort", SORT), option("remove"), arg("update", UPDATE), option("new"),
                arg("fields", PROJECTION), option("upsert"), option("bypassDocumentValidation"),
                COLLATION_SPEC, arg("arrayFilters", ARRAY_FILTERS), arg("hint", INDEX), arg("let", LET));
        collection("count", Rewriter.COUNT).labelled().args(arg("query", FILTER), option("limit"), option("skip"),
                arg("hint", INDEX), COLLATION_SPEC);
        collection("distinct", Rewriter.DISTINCT).labelled().args(arg("key", DISTINCT_KEY), arg("query", FILTER),
                COLLATION_SPEC, arg("hint", INDEX));
        collection("aggregate", Rewriter.AGGREGATE).labelled().crossReferences().args(arg("pipeline", PIPELINE),
                option("explain"), option("allowDiskUse"), CURSOR, option("bypassDocumentValidation"),
                COLLATION_SPEC, arg("hint", INDEX), arg("let", LET));
        spec("getMore", Scope.CURSOR, OnEncrypted.REWRITE, Rewriter.GET_MORE).labelled().args(
                arg("collection", NAMESPACE), option("batchSize"));
        collection("killCursors", Rewriter.KILL_CURSORS).labelled().args(arg("cursors", CURSOR_IDS));
        spec("bulkWrite", Scope.NAMESPACES, OnEncrypted.REWRITE, Rewriter.BULK_WRITE).labelled().args(
                sequence("ops", BULK_OPERATIONS, option("insert"), option("update"), option("delete"),
                        arg("document", DOCUMENTS), arg("filter", FILTER), arg("updateMods", UPDATE),
                        arg("arrayFilters", ARRAY_FILTERS), option("multi"), arg("hint", INDEX), arg("sort", SORT),
                        option("upsert"), COLLATION_SPEC),
                sequence("nsInfo", NAMESPACES, option("ns"), option("collectionUUID")),
                option("ordered"), option("bypassDocumentValidation"), option("errorsOnly"), CURSOR, arg("let", LET));
        // what the server computes on values the proxy cannot rewrite
        for (String name : new String[] {"mapReduce", "geoNear", "geoSearch", "group", "eval", "parallelCollectionScan",
                "planCacheListFilters", "planCacheSetFilter", "planCacheClear", "planCacheClearFilters",
                "compactStructuredEncryptionData", "cleanupStructuredEncryptionData"}) {
            spec(name, Scope.COLLECTION, OnEncrypted.REFUSE, null);
        }
        builder("mapReduce").crossReferences().alias("mapreduce");
        spec("explain", Scope.DATABASE, OnEncrypted.REFUSE, null).labelled().crossReferences()
                .self(arg("explain", COMMAND)).args(option("verbosity"));
    }

    /** Collections and indexes. */
    private static void collections() {
        collection("createIndexes", Rewriter.CREATE_INDEXES).labelled().args(arg("indexes", INDEX_SPECS,
                arg("key", KEY_PATTERN), option("name"), option("unique"), option("sparse"),
                option("expireAfterSeconds"), option("hidden"), configuration("storageEngine"),
                configuration("weights"), option("default_language"), option("language_override"),
                option("textIndexVersion"), option("2dsphereIndexVersion"), option("bits"), option("min"),
                option("max"), option("bucketSize"), COLLATION_SPEC, arg("wildcardProjection", PROJECTION),
                arg("partialFilterExpression", STORED_FILTER), option("background"), option("v"),
                option("prepareUnique")), option("commitQuorum"));
        collection("create", Rewriter.COLLECTION_OPTIONS).labelled().crossReferences().args(option("capped"),
                option("autoIndexId"), option("size"), option("max"), configuration("storageEngine"),
                arg("validator", STORED_FILTER), option("validationLevel"), option("validationAction"),
                configuration("indexOptionDefaults"), arg("viewOn", VIEW), arg("pipeline", VIEW),
                COLLATION_SPEC, configuration("timeseries"), option("expireAfterSeconds"),
                configuration("clusteredIndex"), configuration("changeStreamPreAndPostImages"),
                configuration("encryptedFields"), configuration("idIndex"));
        collection("collMod", Rewriter.COLLECTION_OPTIONS).labelled().crossReferences().args(
                settings("index", arg("keyPattern", KEY_PATTERN), option("name"), option("hidden"),
                        option("expireAfterSeconds"), option("prepareUnique"), option("unique"),
                        option("forceNonUnique")), arg("validator", STORED_FILTER), option("validationLevel"),
                option("validationAction"), arg("viewOn", VIEW), arg("pipeline", VIEW), option("expireAfterSeconds"),
                configuration("changeStreamPreAndPostImages"), option("cappedSize"), option("cappedMax"),
                configuration("timeseries"), option("dryRun"), option("timeseriesBucketsMayHaveMixedSchemaData"));
        passing("drop").labelled();
        passing("dropIndexes").labelled().args(arg("index", INDEX));
        passing("listIndexes").labelled().args(CURSOR);
        passing("collStats").labelled().args(option("scale"));
        passing("validate").labelled().args(option("full"), option("repair"), option("metadata"),
                option("checkBSONConformance"), option("background"), option("fixMultikey"));
        passing("compact").args(option("force"), option("freeSpaceTargetMB"), option("dryRun"));
        passing("reIndex");
        passing("convertToCapped").args(option("size"));
        passing("cloneCollectionAsCapped").crossReferences().args(option("toCollection"), option("size"));
        passing("setIndexCommitQuorum").args(arg("indexNames", NAMES), option("commitQuorum"));
        passing("createSearchIndexes").args(configuration("indexes"));
        passing("updateSearchIndex").args(option("id"), option("name"), configuration("definition"));
        passing("dropSearchIndex").args(option("id"), option("name"));
        // dataSize's bounds are values of its key pattern's fields
        spec("dataSize", Scope.NAMESPACE, OnEncrypted.REFUSE, null);
        spec("renameCollection", Scope.NAMESPACE, OnEncrypted.REFUSE, null).labelled().crossReferences();
        spec("internalRenameIfOptionsAndIndexesMatch", Scope.SERVER, OnEncrypted.REFUSE, null).crossReferences();
        spec("applyOps", Scope.SERVER, OnEncrypted.REFUSE, null).crossReferences();
        spec("filemd5", Scope.DATABASE, OnEncrypted.PASS, null).args(option("root"), option("partialOk"),
                option("startAt"), option("md5state"));
        // query settings hold a whole query shape, constants included: refused on encrypted ones (CrossReferences)
        spec("setQuerySettings", Scope.SERVER, OnEncrypted.PASS, null).crossReferences()
                .self(configuration("setQuerySettings")).args(configuration("settings"));
        spec("removeQuerySettings", Scope.SERVER, OnEncrypted.PASS, null).crossReferences()
                .self(configuration("removeQuerySettings"));
    }

    /** Sharding: key patterns pass; commands whose arguments hold shard-key values do not. */
    private static void sharding() {
        spec("shardCollection", Scope.NAMESPACE, OnEncrypted.PASS, null).labelled().args(arg("key", KEY_PATTERN),
                option("unique"), option("numInitialChunks"), option("presplitHashedZones"),
                COLLATION_SPEC, configuration("timeseries"));
        spec("refineCollectionShardKey", Scope.NAMESPACE, OnEncrypted.PASS, null).args(arg("key", KEY_PATTERN));
        for (String name : new String[] {"balancerCollectionStatus", "abortReshardCollection",
                "commitReshardCollection", "cleanupReshardCollection", "getShardVersion", "abortMoveCollection",
                "abortUnshardCollection"}) {
            spec(name, Scope.NAMESPACE, OnEncrypted.PASS, null);
        }
        spec("configureCollectionBalancing", Scope.NAMESPACE, OnEncrypted.PASS, null).args(option("chunkSize"),
                option("defragmentCollection"), option("enableAutoMerger"));
        spec("setAllowMigrations", Scope.NAMESPACE, OnEncrypted.PASS, null).args(option("allowMigrations"));
        spec("unshardCollection", Scope.NAMESPACE, OnEncrypted.PASS, null).args(option("toShard"));
        spec("moveCollection", Scope.NAMESPACE, OnEncrypted.PASS, null).args(option("toShard"));
        spec("configureQueryAnalyzer", Scope.NAMESPACE, OnEncrypted.PASS, null).args(option("mode"),
                option("samplesPerSecond"));
        // bounds, split points, zones, sampled values: shard-key values in plaintext, or read from the data
        for (String name : new String[] {"split", "splitChunk", "splitVector", "autoSplitVector", "moveChunk",
                "moveRange", "mergeChunks", "clearJumboFlag", "cleanupOrphaned", "updateZoneKeyRange",
                "reshardCollection", "analyzeShardKey", "checkShardingIndex"}) {
            spec(name, Scope.NAMESPACE, OnEncrypted.REFUSE, null);
        }
        spec("enableSharding", Scope.SERVER, OnEncrypted.PASS, null).labelled().args(option("primaryShard"));
        spec("flushRouterConfig", Scope.SERVER, OnEncrypted.PASS, null);
        spec("checkMetadataConsistency", Scope.DATABASE, OnEncrypted.PASS, null).args(CURSOR,
                option("checkIndexes"), option("dbMetadataLockMaxTimeMS"));
        for (String name : new String[] {"balancerStart", "balancerStatus", "balancerStop", "listShards", "getShardMap",
                "isdbgrid", "shardingState", "transitionToDedicatedConfigServer", "transitionFromDedicatedConfigServer",
                "resetPlacementHistory", "removeShard"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null);
        }
        spec("addShard", Scope.SERVER, OnEncrypted.PASS, null).args(option("name"), option("maxSize"));
        spec("addShardToZone", Scope.SERVER, OnEncrypted.PASS, null).args(option("zone"));
        spec("removeShardFromZone", Scope.SERVER, OnEncrypted.PASS, null).args(option("zone"));
        spec("movePrimary", Scope.SERVER, OnEncrypted.PASS, null).args(option("to"));
        spec("mergeAllChunksOnShard", Scope.SERVER, OnEncrypted.PASS, null).args(option("shard"),
                option("maxNumberOfChunksToMerge"));
    }

    /** Handshake, authentication, sessions and transactions. */
    private static void connection() {
        // the handshake's own fields (the MongoDB Handshake spec, the server's hello), also all an OP_QUERY
        // hello may carry (admission.AdmissionGate); drivers add flags to it (backpressure, 2025), so a
        // field it does not list passes as a single value, unless its name is a policy field's
        Arg[] handshake = {option("helloOk"), arg("client", DRIVER_METADATA, configuration("application"),
                configuration("driver"), configuration("os"), option("platform"), configuration("env")),
            arg("compression", NAMES), option("saslSupportedMechs"), settings("speculativeAuthenticate",
                option("saslStart"), option("authenticate"), option("mechanism"), option("payload"), option("db"),
                option("user"), option("autoAuthorize"), settings("options", option("skipEmptyExchange"))),
            settings("topologyVersion", option("processId"), option("counter")),
            option("maxAwaitTimeMS"), option("loadBalanced"), option("backpressure"), option("forShell"),
            configuration("internalClient"), option("hangUpOnStepDown")};
        spec("hello", Scope.CONNECTION, OnEncrypted.PASS, null).labelled().args(handshake).others(option("flag"));
        spec("isMaster", Scope.CONNECTION, OnEncrypted.PASS, null).alias("ismaster").labelled().args(handshake)
                .others(option("flag"));
        spec("saslStart", Scope.CONNECTION, OnEncrypted.PASS, null).labelled().args(option("mechanism"),
                option("payload"), option("autoAuthorize"), configuration("options"));
        spec("saslContinue", Scope.CONNECTION, OnEncrypted.PASS, null).labelled().args(option("conversationId"),
                option("payload"), configuration("options"));
        spec("authenticate", Scope.CONNECTION, OnEncrypted.PASS, null).labelled().args(option("mechanism"),
                option("user"), option("nonce"), option("key"));
        for (String name : new String[] {"logout", "ping", "buildInfo", "startSession"}) {
            spec(name, Scope.CONNECTION, OnEncrypted.PASS, null).labelled();
        }
        Arg sessionIds = arg("sessions", SETTINGS_LIST, option("id"), option("uid"));
        spec("endSessions", Scope.CONNECTION, OnEncrypted.PASS, null).labelled().self(sessionIds);
        spec("getnonce", Scope.CONNECTION, OnEncrypted.PASS, null);
        builder("buildInfo").alias("buildinfo");
        spec("refreshSessions", Scope.SERVER, OnEncrypted.PASS, null).labelled().self(sessionIds);
        for (String name : new String[] {"commitTransaction", "abortTransaction"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null).labelled().args(configuration("recoveryToken"));
        }
        spec("killSessions", Scope.SERVER, OnEncrypted.PASS, null).self(sessionIds);
        spec("killAllSessions", Scope.SERVER, OnEncrypted.PASS, null).self(arg("users", SETTINGS_LIST, option("user"),
                option("db")));
        spec("killAllSessionsByPattern", Scope.SERVER, OnEncrypted.PASS, null).self(arg("patterns", SETTINGS_LIST,
                configuration("lsid"), option("uid"), configuration("users"), configuration("roles")));
    }

    /** The server as a whole: diagnostics, administration, replication, users and roles, auditing. */
    private static void server() {
        spec("currentOp", Scope.SERVER, OnEncrypted.PASS, null).args(option("$all"), option("$ownOps"),
                option("$truncateOps")).others(OPERATIONS);
        spec("killOp", Scope.SERVER, OnEncrypted.PASS, null).args(option("op"));
        spec("listDatabases", Scope.SERVER, OnEncrypted.PASS, null).labelled().args(arg("filter", METADATA_FILTER,
                option("name"), option("sizeOnDisk"), option("empty"), configuration("shards")), option("nameOnly"),
                option("authorizedDatabases"));
        // parameters and status sections, by the server's own names
        spec("getParameter", Scope.SERVER, OnEncrypted.PASS, null).labelled().self(settings("getParameter",
                option("showDetails"), option("allParameters"), option("setAt"))).others(option("parameter"));
        spec("setParameter", Scope.SERVER, OnEncrypted.PASS, null).others(configuration("parameter"));
        spec("serverStatus", Scope.SERVER, OnEncrypted.PASS, null).labelled().others(configuration("section"));
        spec("getClusterParameter", Scope.SERVER, OnEncrypted.PASS, null).self(arg("getClusterParameter", NAMES));
        spec("setClusterParameter", Scope.SERVER, OnEncrypted.PASS, null).self(configuration("setClusterParameter"));
        spec("connectionStatus", Scope.SERVER, OnEncrypted.PASS, null).labelled().args(option("showPrivileges"));
        spec("replSetGetStatus", Scope.SERVER, OnEncrypted.PASS, null).labelled().args(option("initialSync"));
        spec("replSetInitiate", Scope.SERVER, OnEncrypted.PASS, null).labelled().self(configuration("config"));
        spec("replSetReconfig", Scope.SERVER, OnEncrypted.PASS, null).labelled().self(configuration("config"))
                .args(option("force"));
        spec("replSetGetConfig", Scope.SERVER, OnEncrypted.PASS, null).args(option("commitmentStatus"),
                option("includeNewlyAdded"));
        spec("replSetResizeOplog", Scope.SERVER, OnEncrypted.PASS, null).args(option("size"),
                option("minRetentionHours"));
        spec("replSetStepDown", Scope.SERVER, OnEncrypted.PASS, null).args(option("secondaryCatchUpPeriodSecs"),
                option("force"));
        spec("lockInfo", Scope.SERVER, OnEncrypted.PASS, null).args(option("includeStorageEngineDiagnostics"));
        spec("fsync", Scope.SERVER, OnEncrypted.PASS, null).args(option("lock"), option("async"),
                option("fsyncLockAcquisitionTimeoutMillis"));
        spec("rotateCertificates", Scope.SERVER, OnEncrypted.PASS, null).args(option("message"));
        spec("setFeatureCompatibilityVersion", Scope.SERVER, OnEncrypted.PASS, null).args(option("confirm"));
        spec("getDefaultRWConcern", Scope.SERVER, OnEncrypted.PASS, null).args(option("inMemory"));
        spec("setDefaultRWConcern", Scope.SERVER, OnEncrypted.PASS, null).args(configuration("defaultReadConcern"),
                configuration("defaultWriteConcern"));
        spec("setUserWriteBlockMode", Scope.SERVER, OnEncrypted.PASS, null).args(option("global"),
                option("reason"));
        spec("shutdown", Scope.SERVER, OnEncrypted.PASS, null).args(option("force"), option("timeoutSecs"));
        spec("dropConnections", Scope.SERVER, OnEncrypted.PASS, null).args(arg("hostAndPort", NAMES));
        spec("getAuditConfig", Scope.SERVER, OnEncrypted.PASS, null);
        spec("setAuditConfig", Scope.SERVER, OnEncrypted.PASS, null).args(option("auditAuthorizationSuccess"),
                configuration("filter"));
        spec("appendOplogNote", Scope.SERVER, OnEncrypted.PASS, null).args(arg("data", COMMENT));
        spec("getLastError", Scope.SERVER, OnEncrypted.PASS, null).args(option("w"), option("j"), option("wtimeout"),
                option("fsync"));
        spec("setFreeMonitoring", Scope.SERVER, OnEncrypted.PASS, null).args(option("action"));
        spec("setProfilingFilterGlobally", Scope.SERVER, OnEncrypted.PASS, null).args(PROFILER_FILTER);
        spec("setChangeStreamState", Scope.SERVER, OnEncrypted.PASS, null).args(option("enabled"));
        spec("startRecordingTraffic", Scope.SERVER, OnEncrypted.PASS, null).args(option("filename"),
                option("maxFileSize"), option("bufferSize"), option("maxMemUsage"));
        spec("autoCompact", Scope.SERVER, OnEncrypted.PASS, null).args(option("freeSpaceTargetMB"),
                option("runOnce"));
        for (String name : new String[] {"getCmdLineOpts", "listCommands", "connPoolStats", "shardConnPoolStats", "top",
                "fsyncUnlock", "logRotate", "features", "logApplicationMessage", "replSetAbortPrimaryCatchUp",
                "replSetFreeze", "replSetMaintenance", "replSetSyncFrom", "resetError", "getPrevError", "atlasVersion",
                "getFreeMonitoringStatus", "availableQueryOptions", "replSetHeartbeat", "replSetUpdatePosition",
                "getDiagnosticData", "invalidateUserCache", "getChangeStreamState", "stopRecordingTraffic",
                "whatsmyuri", "getLog", "hostInfo"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null);
        }
        for (String name : new String[] {"whatsmyuri", "getLog", "hostInfo"}) {
            builder(name).labelled();
        }
        users();
    }

    /** Users and roles: names, roles and privileges are configuration; customData is the application's own. */
    private static void users() {
        Arg[] user = {option("pwd"), arg("customData", COMMENT), configuration("roles"), option("digestPassword"),
            arg("mechanisms", NAMES), configuration("authenticationRestrictions")};
        spec("createUser", Scope.SERVER, OnEncrypted.PASS, null).args(user);
        spec("updateUser", Scope.SERVER, OnEncrypted.PASS, null).args(user);
        spec("usersInfo", Scope.SERVER, OnEncrypted.PASS, null).self(configuration("usersInfo")).args(
                option("showCredentials"), option("showCustomData"), option("showPrivileges"),
                option("showAuthenticationRestrictions"), arg("filter", METADATA_FILTER, option("_id"),
                        option("user"), option("db"), configuration("roles"), arg("mechanisms", NAMES)));
        spec("rolesInfo", Scope.SERVER, OnEncrypted.PASS, null).self(configuration("rolesInfo")).args(
                option("showPrivileges"), option("showBuiltinRoles"), option("showAuthenticationRestrictions"));
        Arg[] role = {configuration("privileges"), configuration("roles"),
            configuration("authenticationRestrictions")};
        spec("createRole", Scope.SERVER, OnEncrypted.PASS, null).args(role);
        spec("updateRole", Scope.SERVER, OnEncrypted.PASS, null).args(role);
        for (String name : new String[] {"grantRolesToUser", "revokeRolesFromUser", "grantRolesToRole",
                "revokeRolesFromRole"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null).args(configuration("roles"));
        }
        for (String name : new String[] {"grantPrivilegesToRole", "revokePrivilegesFromRole"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null).args(configuration("privileges"));
        }
        for (String name : new String[] {"dropUser", "dropAllUsersFromDatabase", "dropRole", "dropAllRolesFromDatabase"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null);
        }
    }

    /** The database as a whole. */
    private static void database() {
        spec("listCollections", Scope.DATABASE, OnEncrypted.PASS, null).labelled().args(arg("filter", METADATA_FILTER,
                option("name"), option("type"), configuration("options"), configuration("info"),
                configuration("idIndex")), option("nameOnly"), option("authorizedCollections"), CURSOR);
        spec("dbStats", Scope.DATABASE, OnEncrypted.PASS, null).labelled().args(option("scale"), option("freeStorage"));
        spec("dropDatabase", Scope.DATABASE, OnEncrypted.PASS, null).labelled();
        spec("profile", Scope.DATABASE, OnEncrypted.PASS, null).args(option("slowms"), option("sampleRate"),
                PROFILER_FILTER);
        spec("dbHash", Scope.DATABASE, OnEncrypted.PASS, null).args(arg("collections", NAMES));
        spec("validateDBMetadata", Scope.DATABASE, OnEncrypted.PASS, null).args(settings("apiParameters",
                option("version"), option("strict"), option("deprecationErrors")), option("db"), option("collection"));
        spec("dbCheck", Scope.DATABASE, OnEncrypted.PASS, null).args(option("maxCount"), option("maxSize"),
                option("maxCountPerSecond"), option("maxDocsPerBatch"), option("maxBatchTimeMillis"),
                option("snapshotRead"), configuration("batchWriteConcern"), option("validateMode"),
                option("skipLookupForExtraKeys"), option("bsonValidateMode"));
    }

    // ---- building (CommandSpecs): the rows above name what the registry builds --------------

    private static Builder collection(String name, Rewriter rewriter) {
        return SPECS.spec(name, Scope.COLLECTION, OnEncrypted.REWRITE, rewriter);
    }

    private static Builder passing(String name) {
        return SPECS.spec(name, Scope.COLLECTION, OnEncrypted.PASS, null);
    }

    private static Builder spec(String name, Scope scope, OnEncrypted onEncrypted, Rewriter rewriter) {
        return SPECS.spec(name, scope, onEncrypted, rewriter);
    }

    private static Builder builder(String name) {
        return SPECS.builder(name);
    }
}
