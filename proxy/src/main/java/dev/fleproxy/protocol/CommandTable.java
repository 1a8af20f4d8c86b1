package dev.fleproxy.protocol;

import static dev.fleproxy.protocol.ArgKind.ARRAY_FILTERS;
import static dev.fleproxy.protocol.ArgKind.BOUNDS;
import static dev.fleproxy.protocol.ArgKind.BULK_OPERATIONS;
import static dev.fleproxy.protocol.ArgKind.COLLATION;
import static dev.fleproxy.protocol.ArgKind.COMMENT;
import static dev.fleproxy.protocol.ArgKind.CONFIGURATION;
import static dev.fleproxy.protocol.ArgKind.CONSTANTS;
import static dev.fleproxy.protocol.ArgKind.CURSOR_IDS;
import static dev.fleproxy.protocol.ArgKind.DELETE_STATEMENTS;
import static dev.fleproxy.protocol.ArgKind.DISTINCT_KEY;
import static dev.fleproxy.protocol.ArgKind.DOCUMENTS;
import static dev.fleproxy.protocol.ArgKind.FILTER;
import static dev.fleproxy.protocol.ArgKind.INDEX;
import static dev.fleproxy.protocol.ArgKind.INDEX_SPECS;
import static dev.fleproxy.protocol.ArgKind.KEY_PATTERN;
import static dev.fleproxy.protocol.ArgKind.LET;
import static dev.fleproxy.protocol.ArgKind.NAMES;
import static dev.fleproxy.protocol.ArgKind.NAMESPACE;
import static dev.fleproxy.protocol.ArgKind.NAMESPACES;
import static dev.fleproxy.protocol.ArgKind.OPTION;
import static dev.fleproxy.protocol.ArgKind.PIPELINE;
import static dev.fleproxy.protocol.ArgKind.PROJECTION;
import static dev.fleproxy.protocol.ArgKind.SETTINGS;
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
    /**
     * Legacy opcodes drivers since MongoDB 3.6 never send: OP_UPDATE, OP_INSERT, OP_DELETE and
     * OP_KILL_CURSORS get no reply by design, OP_GET_MORE's would carry documents in an OP_REPLY,
     * which the proxy does not decrypt. While collections are encrypted, a connection that sends
     * one is closed.
     */
    public static final Set<Integer> LEGACY_OPCODES = Set.of(2001, 2002, 2005, 2006, 2007);


    /** Arguments every command may carry (the command reference's generic arguments). */
    private static final List<Arg> GENERIC = List.of(
            arg("$db", NAMESPACE),
            settings("lsid", option("id"), option("uid"), option("txnNumber"), option("txnUUID")),
            option("txnNumber"), option("autocommit"), option("startTransaction"), option("txnRetryCounter"),
            settings("$clusterTime", option("clusterTime"), configuration("signature")),
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
    /** A collation's settings (the command reference's collation document), each a single value. */
    private static final Arg COLLATION_SPEC = arg("collation", COLLATION, option("locale"), option("caseLevel"),
            option("caseFirst"), option("strength"), option("numericOrdering"), option("alternate"),
            option("maxVariable"), option("normalization"), option("backwards"), option("version"));

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
        spec("explain", Scope.DATABASE, OnEncrypted.REFUSE, null).labelled().crossReferences();
    }

    /** Collections and indexes. */
    private static void collections() {
        collection("createIndexes", Rewriter.CREATE_INDEXES).labelled().args(arg("indexes", INDEX_SPECS,
                arg("key", KEY_PATTERN), option("name"), option("unique"), option("sparse"),
                option("expireAfterSeconds"), option("hidden"), configuration("storageEngine"),
                configuration("weights"), option("default_language"), option("language_override"),
                option("textIndexVersion"), option("2dsphereIndexVersion"), option("bits"), option("min"),
                option("max"), option("bucketSize"), COLLATION_SPEC, configuration("wildcardProjection"),
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
                configuration("index"), arg("validator", STORED_FILTER), option("validationLevel"),
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
        spec("filemd5", Scope.DATABASE, OnEncrypted.PASS, null);
        // query settings hold a whole query shape, constants included: refused on encrypted ones (CrossReferences)
        spec("setQuerySettings", Scope.SERVER, OnEncrypted.PASS, null).crossReferences();
        spec("removeQuerySettings", Scope.SERVER, OnEncrypted.PASS, null).crossReferences();
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
        spec("enableSharding", Scope.SERVER, OnEncrypted.PASS, null).labelled();
        spec("flushRouterConfig", Scope.SERVER, OnEncrypted.PASS, null);
        spec("checkMetadataConsistency", Scope.DATABASE, OnEncrypted.PASS, null);
        for (String name : new String[] {"addShard", "addShardToZone", "removeShard", "removeShardFromZone",
                "balancerStart", "balancerStatus", "balancerStop", "listShards", "getShardMap", "isdbgrid",
                "shardingState", "movePrimary", "mergeAllChunksOnShard", "transitionToDedicatedConfigServer",
                "transitionFromDedicatedConfigServer", "resetPlacementHistory"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null);
        }
    }

    /** Handshake, authentication, sessions and transactions. */
    private static void connection() {
        spec("hello", Scope.CONNECTION, OnEncrypted.PASS, null).labelled();
        spec("isMaster", Scope.CONNECTION, OnEncrypted.PASS, null).alias("ismaster").labelled();
        for (String name : new String[] {"saslStart", "saslContinue", "authenticate", "logout", "ping",
                "buildInfo", "endSessions", "startSession"}) {
            spec(name, Scope.CONNECTION, OnEncrypted.PASS, null).labelled();
        }
        spec("getnonce", Scope.CONNECTION, OnEncrypted.PASS, null);
        builder("buildInfo").alias("buildinfo");
        for (String name : new String[] {"refreshSessions", "commitTransaction", "abortTransaction"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null).labelled();
        }
        for (String name : new String[] {"killSessions", "killAllSessions", "killAllSessionsByPattern"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null);
        }
    }

    /** The server as a whole: diagnostics, administration, replication, users and roles, auditing. */
    private static void server() {
        for (String name : new String[] {"getParameter", "serverStatus", "connectionStatus", "whatsmyuri", "getLog",
                "hostInfo", "listDatabases", "replSetGetStatus", "replSetInitiate", "replSetReconfig"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null).labelled();
        }
        for (String name : new String[] {"getCmdLineOpts", "listCommands", "lockInfo", "connPoolStats",
                "shardConnPoolStats", "top", "currentOp", "killOp", "fsync", "fsyncUnlock", "logRotate",
                "rotateCertificates", "setFeatureCompatibilityVersion", "getDefaultRWConcern", "setDefaultRWConcern",
                "getClusterParameter", "setClusterParameter", "setParameter", "setUserWriteBlockMode", "shutdown",
                "dropConnections", "features", "getAuditConfig", "setAuditConfig", "logApplicationMessage",
                "appendOplogNote", "replSetAbortPrimaryCatchUp", "replSetFreeze", "replSetGetConfig",
                "replSetMaintenance", "replSetResizeOplog", "replSetStepDown", "replSetSyncFrom", "getLastError",
                "resetError", "getPrevError", "atlasVersion", "getFreeMonitoringStatus",
                "setFreeMonitoring", "availableQueryOptions",
                "replSetHeartbeat", "replSetUpdatePosition", "setProfilingFilterGlobally", "getDiagnosticData",
                "usersInfo", "rolesInfo", "createUser", "updateUser", "dropUser",
                "dropAllUsersFromDatabase", "grantRolesToUser", "revokeRolesFromUser", "createRole", "updateRole",
                "dropRole", "dropAllRolesFromDatabase", "grantPrivilegesToRole", "revokePrivilegesFromRole",
                "grantRolesToRole", "revokeRolesFromRole", "invalidateUserCache", "setChangeStreamState",
                "getChangeStreamState", "startRecordingTraffic", "stopRecordingTraffic", "autoCompact"}) {
            spec(name, Scope.SERVER, OnEncrypted.PASS, null);
        }
    }

    /** The database as a whole. */
    private static void database() {
        for (String name : new String[] {"listCollections", "dbStats", "dropDatabase"}) {
            spec(name, Scope.DATABASE, OnEncrypted.PASS, null).labelled();
        }
        for (String name : new String[] {"profile", "dbHash", "validateDBMetadata", "dbCheck"}) {
            spec(name, Scope.DATABASE, OnEncrypted.PASS, null);
        }
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
