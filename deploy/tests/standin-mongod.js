// A STAND-IN for the cluster's mongod members and mongos: NOT mongod, and no database. It speaks
// just enough of the MongoDB wire protocol (OP_QUERY handshake, OP_MSG) for mongosh 2.12 to
// connect, and answers the commands deploy/mongo/init-cluster.js runs the way MongoDB's manual
// says a member in a given state answers them. It exists because no mongod can run where the
// tests run; deploy/tests/init-cluster.test.js runs the real script with the real mongosh
// against it. Nothing here stores or replicates data: "replication" is a timer that moves a
// member's state from STARTUP to STARTUP2 to SECONDARY, and an "election" picks a primary.
//
// What it models (MongoDB 8.0, from the manual's pages on these commands):
//   hello / isMaster      every member answers; an uninitiated one without setName ("Does not
//                         have a valid replica set config"), a mongos with msg "isdbgrid".
//   replSetGetConfig      NotYetInitialized (94) before the member has a config.
//   replSetGetStatus      NotYetInitialized (94) before; members in STARTUP/STARTUP2 while they
//                         catch up, then SECONDARY; one PRIMARY after an election.
//   replSetInitiate       AlreadyInitialized (23) on a member with a config; InvalidReplicaSetConfig
//                         (93) for a wrong set name, a missing configsvr flag, or a config without
//                         this member; NodeNotFound (74) when a proposed member does not answer or
//                         already belongs to a set (the quorum check).
//   replSetReconfig       NotWritablePrimary (10107) off the primary; CurrentConfigNotCommittedYet
//                         (308) while the previous config is not committed; ConfigurationInProgress
//                         (109) during another reconfig; NewReplicaSetConfigurationIncompatible (103)
//                         for a version not above the current one, another set name, or more than
//                         one voting member added or removed; the term field is ignored.
//   addShard / listShards (mongos) FailedToSatisfyReadPreference (133) before the config servers'
//                         set has a primary; addShard of a shard already added with the same name
//                         and set answers ok (idempotent); OperationFailed (96) when the set's
//                         primary cannot be found or a seed host is not in the set.
//   anything else         CommandNotFound (59), as mongod does for an unknown command.
"use strict";
const net = require("node:net");
const path = require("node:path");
const { BSON, Long, Timestamp, ObjectId } = require(path.join(__dirname, "..", "..", ".tools", "node_modules", "bson"));

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const MAX_WIRE_VERSION = 25; // MongoDB 8.0

function error(code, codeName, errmsg) {
  return { ok: 0, errmsg, code, codeName };
}

/** Timings in ms: how long a member takes to leave STARTUP/STARTUP2, to elect, to commit a config. */
const DEFAULT_TIMINGS = { startup: 150, catchUp: 400, election: 600, commit: 1200 };

class Member {
  constructor(world, kind, setName) {
    this.world = world;
    this.kind = kind; // "shardsvr" | "configsvr" | "mongos"
    this.setName = setName; // --replSet, or null for mongos
    this.host = null; // "127.0.0.1:port", once listening
    this.server = null;
    this.up = true; // false: connections are refused (a member that is not running)
  }
  get set() {
    return this.world.sets.get(this.setName);
  }
  /** The set's config if this member is in it (a member not in the config has none). */
  get config() {
    const set = this.set;
    return set && set.config && set.config.members.some((m) => m.host === this.host) ? set.config : null;
  }
}

/** One replica set: its config (shared by every member in it), the members' states, its primary. */
class ReplicaSet {
  constructor(world, name, configsvr) {
    this.world = world;
    this.name = name;
    this.configsvr = configsvr;
    this.config = null;
    this.term = 0;
    this.primary = null;
    this.states = new Map(); // host -> { state, since }
    this.committedAt = 0; // Date.now() after which the current config counts as committed
    this.reconfiguring = false;
  }
  stateOf(host) {
    const s = this.states.get(host);
    if (!s) return "STARTUP";
    const t = this.world.timings;
    const age = Date.now() - s.since;
    if (host === this.primary) return "PRIMARY";
    if (age < t.startup) return "STARTUP";
    if (age < t.startup + t.catchUp) return "STARTUP2";
    return "SECONDARY";
  }
  /** Elects the first healthy SECONDARY once the election delay has passed since initiation. */
  tick() {
    if (!this.config || this.primary) return;
    if (Date.now() - this.initiatedAt < this.world.timings.election) return;
    const candidate = this.config.members.find((m) => this.stateOf(m.host) === "SECONDARY" && this.world.member(m.host).up);
    if (candidate) {
      this.primary = candidate.host;
      this.term += 1;
      this.config.term = this.term;
      this.world.event({ set: this.name, elected: candidate.host, term: this.term });
    }
  }
  install(config, now) {
    this.config = config;
    for (const m of config.members) if (!this.states.has(m.host)) this.states.set(m.host, { since: now });
    this.committedAt = now + this.world.timings.commit;
  }
}

class World {
  constructor(timings = {}) {
    this.timings = { ...DEFAULT_TIMINGS, ...timings };
    this.sets = new Map();
    this.members = [];
    this.mongos = null;
    this.shards = []; // mongos's config.shards: { _id, host, state }
    this.events = []; // state changes and every command received, for the tests
    this.connectionId = 0;
  }
  event(e) {
    this.events.push({ at: Date.now(), ...e });
  }
  member(host) {
    return this.members.find((m) => m.host === host);
  }
  addSet(name, count, configsvr) {
    this.sets.set(name, new ReplicaSet(this, name, configsvr));
    const added = [];
    for (let i = 0; i < count; i++) {
      const m = new Member(this, configsvr ? "configsvr" : "shardsvr", name);
      this.members.push(m);
      added.push(m);
    }
    return added;
  }
  addMongos(configSetName) {
    this.mongos = new Member(this, "mongos", null);
    this.mongos.configSet = configSetName;
    this.members.push(this.mongos);
    return this.mongos;
  }
  async listen() {
    await Promise.all(this.members.map((m) => new Promise((resolve, reject) => {
      m.server = net.createServer((socket) => this.serve(m, socket));
      m.server.on("error", reject);
      m.server.listen(0, "127.0.0.1", () => {
        m.host = `127.0.0.1:${m.server.address().port}`;
        resolve();
      });
    })));
    this.timer = setInterval(() => this.sets.forEach((s) => s.tick()), 50);
  }
  async close() {
    clearInterval(this.timer);
    await Promise.all(this.members.map((m) => new Promise((resolve) => {
      for (const s of m.sockets || []) s.destroy();
      m.server.close(() => resolve());
    })));
  }
  hosts(setName) {
    return this.members.filter((m) => m.setName === setName).map((m) => m.host);
  }

  /**
   * A set that earlier runs initiated: config version `version`, the first `count` members,
   * caught up, the first one PRIMARY, committed.
   */
  preInitiate(setName, count, version = 1) {
    const set = this.sets.get(setName);
    const hosts = this.hosts(setName).slice(0, count);
    const config = baseConfig(setName, hosts, set.configsvr);
    config.version = version;
    const long = Date.now() - 3600 * 1000;
    set.install(config, long);
    set.initiatedAt = long;
    set.primary = hosts[0];
    set.term = 1;
    config.term = 1;
    set.committedAt = long;
  }

  // ---- the wire ----

  serve(member, socket) {
    if (!member.up) return socket.destroy();
    (member.sockets = member.sockets || new Set()).add(socket);
    socket.on("close", () => member.sockets.delete(socket));
    socket.on("error", () => {});
    const connectionId = ++this.connectionId;
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4) {
        const length = buffered.readInt32LE(0);
        if (buffered.length < length) break;
        const message = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        let reply;
        try {
          reply = this.handle(member, connectionId, message);
        } catch (e) {
          this.event({ host: member.host, crash: String(e && e.stack || e) });
          socket.destroy();
          return;
        }
        if (reply) socket.write(reply);
      }
    });
  }

  handle(member, connectionId, message) {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    if (opCode === OP_QUERY) {
      // legacy hello on admin.$cmd: flags, cstring namespace, skip, limit, query
      const nsEnd = message.indexOf(0, 20);
      const docStart = nsEnd + 1 + 8;
      const query = BSON.deserialize(message.subarray(docStart, docStart + message.readInt32LE(docStart)), { promoteLongs: false });
      const body = this.command(member, connectionId, query, true);
      const doc = BSON.serialize(body);
      const header = Buffer.alloc(36);
      header.writeInt32LE(36 + doc.length, 0);
      header.writeInt32LE(requestId, 8);
      header.writeInt32LE(OP_REPLY, 12);
      header.writeInt32LE(0, 16); // responseFlags
      header.writeBigInt64LE(0n, 20); // cursorID
      header.writeInt32LE(0, 28); // startingFrom
      header.writeInt32LE(1, 32); // numberReturned
      return Buffer.concat([header, doc]);
    }
    if (opCode !== OP_MSG) throw new Error(`opCode ${opCode} is not served by the stand-in`);
    const flags = message.readUInt32LE(16);
    const end = message.length - (flags & 1 ? 4 : 0);
    let pos = 20;
    let body = null;
    while (pos < end) {
      const kind = message[pos++];
      const size = message.readInt32LE(pos);
      if (kind === 0) body = BSON.deserialize(message.subarray(pos, pos + size), { promoteLongs: false });
      pos += size; // kind 1 sections (document sequences) carry nothing these commands use
    }
    const reply = BSON.serialize(this.command(member, connectionId, body, false));
    if (flags & 2) return null; // moreToCome: the client wants no reply
    const header = Buffer.alloc(21);
    header.writeInt32LE(21 + reply.length, 0);
    header.writeInt32LE(requestId, 8);
    header.writeInt32LE(OP_MSG, 12);
    header.writeUInt32LE(0, 16);
    header.writeUInt8(0, 20);
    return Buffer.concat([header, reply]);
  }

  command(member, connectionId, body, legacy) {
    const name = Object.keys(body)[0];
    const handler = COMMANDS[name] || COMMANDS[name.toLowerCase()];
    const reply = handler ? handler(this, member, body, { connectionId, legacy }) : error(59, "CommandNotFound", `no such command: '${name}'`);
    if (!["hello", "isMaster", "ismaster", "ping", "endSessions"].includes(name)) {
      this.event({ host: member.host, command: name, ok: reply.ok, code: reply.code, codeName: reply.codeName });
    }
    return reply;
  }
}

function baseConfig(setName, hosts, configsvr) {
  const config = {
    _id: setName, version: 1, term: 0, protocolVersion: Long.fromNumber(1), writeConcernMajorityJournalDefault: true,
    members: hosts.map((host, i) => memberConfig(i, host)),
    settings: { chainingAllowed: true, heartbeatIntervalMillis: 2000, heartbeatTimeoutSecs: 10, electionTimeoutMillis: 10000,
      catchUpTimeoutMillis: -1, getLastErrorModes: {}, getLastErrorDefaults: { w: 1, wtimeout: 0 }, replicaSetId: new ObjectId() },
  };
  if (configsvr) config.configsvr = true;
  return config;
}

function memberConfig(id, host, given = {}) {
  return { _id: id, host, arbiterOnly: false, buildIndexes: true, hidden: false, priority: 1, tags: {},
    secondaryDelaySecs: Long.fromNumber(0), votes: 1, ...given };
}

function voters(config) {
  return new Set(config.members.filter((m) => (m.votes === undefined ? 1 : Number(m.votes)) > 0).map((m) => m.host));
}

function clone(doc) {
  return BSON.deserialize(BSON.serialize(doc), { promoteLongs: false });
}

function hello(world, member, body, { connectionId, legacy }) {
  const reply = {
    isWritablePrimary: false,
    maxBsonObjectSize: 16 * 1024 * 1024, maxMessageSizeBytes: 48000000, maxWriteBatchSize: 100000,
    localTime: new Date(), logicalSessionTimeoutMinutes: 30, connectionId,
    minWireVersion: 0, maxWireVersion: MAX_WIRE_VERSION, readOnly: false, ok: 1,
  };
  if (body.helloOk) reply.helloOk = true;
  if (member.kind === "mongos") {
    reply.isWritablePrimary = true;
    reply.msg = "isdbgrid";
  } else {
    const set = member.set;
    const config = member.config;
    if (!config) {
      reply.secondary = false;
      reply.isreplicaset = true;
      reply.info = "Does not have a valid replica set config";
    } else {
      const state = set.stateOf(member.host);
      reply.hosts = config.members.filter((m) => !m.hidden && !m.arbiterOnly).map((m) => m.host);
      reply.setName = set.name;
      reply.setVersion = config.version;
      reply.isWritablePrimary = state === "PRIMARY";
      reply.secondary = state === "SECONDARY";
      if (set.primary) reply.primary = set.primary;
      reply.me = member.host;
      if (state === "PRIMARY") reply.electionId = new ObjectId("7fffffff" + String(set.term).padStart(16, "0"));
      if (member.kind === "configsvr") reply.configsvr = 2;
    }
  }
  if (legacy || body.isMaster || body.ismaster) {
    reply.ismaster = reply.isWritablePrimary;
    delete reply.isWritablePrimary;
  }
  return reply;
}

function needsReplSet(member) {
  return member.kind === "mongos" ? error(59, "CommandNotFound", "no such command on mongos") : null;
}

const COMMANDS = {
  hello, isMaster: hello, ismaster: hello,
  ping: () => ({ ok: 1 }),
  endSessions: () => ({ ok: 1 }),
  buildInfo: () => ({ version: "8.0.20", versionArray: [8, 0, 20, 0], gitVersion: "stand-in", modules: [],
    allocator: "none", javascriptEngine: "none", bits: 64, debug: false, maxBsonObjectSize: 16 * 1024 * 1024,
    storageEngines: [], ok: 1 }),
  buildinfo: (...a) => COMMANDS.buildInfo(...a),

  replSetGetConfig(world, member) {
    const refuse = needsReplSet(member);
    if (refuse) return refuse;
    const config = member.config;
    if (!config) return error(94, "NotYetInitialized", "no replset config has been received");
    return { config: clone(config), ok: 1 };
  },

  replSetGetStatus(world, member) {
    const refuse = needsReplSet(member);
    if (refuse) return refuse;
    const set = member.set;
    const config = member.config;
    if (!config) return error(94, "NotYetInitialized", "no replset config has been received");
    const states = { PRIMARY: 1, SECONDARY: 2, STARTUP: 0, STARTUP2: 5, "(not reachable/healthy)": 8 };
    const members = config.members.map((m) => {
      const up = world.member(m.host).up;
      const stateStr = up ? set.stateOf(m.host) : "(not reachable/healthy)";
      const entry = { _id: m._id, name: m.host, health: up ? 1 : 0, state: states[stateStr], stateStr };
      if (m.host === member.host) entry.self = true;
      return entry;
    });
    return { set: set.name, date: new Date(), myState: states[set.stateOf(member.host)], term: Long.fromNumber(set.term),
      members, ok: 1 };
  },

  replSetInitiate(world, member, body) {
    const refuse = needsReplSet(member);
    if (refuse) return refuse;
    const set = member.set;
    if (member.config) return error(23, "AlreadyInitialized", "already initialized");
    const given = body.replSetInitiate;
    if (!given || typeof given !== "object") {
      return error(93, "InvalidReplicaSetConfig", "the stand-in needs an explicit config document");
    }
    if (given._id !== set.name) {
      return error(93, "InvalidReplicaSetConfig",
        `Attempting to initiate a replica set with name ${given._id}, but command line reports ${set.name}; rejecting`);
    }
    if (set.configsvr && given.configsvr !== true) {
      return error(93, "InvalidReplicaSetConfig", "Nodes being used for config servers must be started with the --configsvr flag"
        + " and the replica set config must have configsvr: true");
    }
    if (!set.configsvr && given.configsvr) {
      return error(93, "InvalidReplicaSetConfig", "configsvr: true in the config of a member started without --configsvr");
    }
    const hosts = (given.members || []).map((m) => m.host);
    if (!hosts.includes(member.host)) {
      return error(93, "InvalidReplicaSetConfig", `No host described in new configuration with {version: 1, term: 0} for replica set ${set.name} maps to this node`);
    }
    if (new Set((given.members || []).map((m) => m._id)).size !== hosts.length) {
      return error(93, "InvalidReplicaSetConfig", "Found two member configurations with same _id field");
    }
    for (const h of hosts) {
      const other = world.member(h);
      if (!other || !other.up) {
        return error(74, "NodeNotFound", `replSetInitiate quorum check failed because not all proposed set members responded affirmatively: ${h} failed with Connection refused`);
      }
      if (other.setName !== set.name || other.config) {
        return error(74, "NodeNotFound", `replSetInitiate quorum check failed because not all proposed set members responded affirmatively: ${h} failed with Our replica set configuration is invalid or does not include us`);
      }
    }
    const config = baseConfig(set.name, [], set.configsvr);
    config.members = given.members.map((m) => memberConfig(m._id, m.host, m));
    Object.assign(config.settings, given.settings || {});
    const now = Date.now();
    set.install(config, now);
    set.initiatedAt = now;
    world.event({ set: set.name, initiated: hosts });
    return { ok: 1 };
  },

  replSetReconfig(world, member, body) {
    const refuse = needsReplSet(member);
    if (refuse) return refuse;
    const set = member.set;
    const current = member.config;
    if (!current) return error(94, "NotYetInitialized", "no replset config has been received");
    const state = set.stateOf(member.host);
    if (state !== "PRIMARY") {
      return error(10107, "NotWritablePrimary", `replSetReconfig should only be run on a writable PRIMARY. Current state ${state};`);
    }
    if (set.reconfiguring) return error(109, "ConfigurationInProgress", "Cannot run replSetReconfig because the node is currently updating its configuration");
    if (!body.force && Date.now() < set.committedAt) {
      return error(308, "CurrentConfigNotCommittedYet",
        `Cannot run replSetReconfig because the current config: { version: ${current.version}, term: ${current.term} } is not committed.`);
    }
    const given = body.replSetReconfig;
    if (!given || given._id !== set.name) {
      return error(103, "NewReplicaSetConfigurationIncompatible", `New and old configurations differ in replica set name; old was ${set.name}, and new is ${given && given._id}`);
    }
    if (!(Number(given.version) > Number(current.version))) {
      return error(103, "NewReplicaSetConfigurationIncompatible",
        `New replica set configuration version must be greater than old, but ${given.version} is not greater than ${current.version} for replica set ${set.name}`);
    }
    if (!!given.configsvr !== !!current.configsvr) {
      return error(103, "NewReplicaSetConfigurationIncompatible", "Cannot change the configsvr field of a replica set config");
    }
    const members = given.members || [];
    if (new Set(members.map((m) => m._id)).size !== members.length || new Set(members.map((m) => m.host)).size !== members.length) {
      return error(93, "InvalidReplicaSetConfig", "Found two member configurations with same _id or host field");
    }
    for (const m of members) {
      const old = current.members.find((o) => o.host === m.host);
      if (old && old._id !== m._id) {
        return error(103, "NewReplicaSetConfigurationIncompatible", `New and old configurations both have members with host of ${m.host} but in the new configuration the _id field is ${m._id} and in the old configuration it is ${old._id} for replica set ${set.name}`);
      }
    }
    const before = voters(current);
    const after = voters({ members });
    const changed = [...after].filter((h) => !before.has(h)).length + [...before].filter((h) => !after.has(h)).length;
    if (!body.force && changed > 1) {
      return error(103, "NewReplicaSetConfigurationIncompatible", "Rejecting reconfig where the new config adds or removes more than one voting member");
    }
    if (after.size > 7) return error(93, "InvalidReplicaSetConfig", "Replica set configuration contains more than 7 voting members");
    for (const m of members) {
      const other = world.member(m.host);
      if (!other || !other.up) {
        return error(74, "NodeNotFound", `Quorum check failed because not enough voting nodes responded; required 1 but only the following nodes responded: ${member.host}; the following nodes did not respond affirmatively: ${m.host} failed with Connection refused`);
      }
      if (other.setName !== set.name) {
        return error(74, "NodeNotFound", `${m.host} belongs to replica set ${other.setName}, not ${set.name}`);
      }
    }
    const next = clone(current);
    next.version = Number(given.version);
    next.term = set.term; // the primary sets term; a term in the command is ignored
    next.members = members.map((m) => memberConfig(m._id, m.host, m));
    const added = members.map((m) => m.host).filter((h) => !current.members.some((o) => o.host === h));
    const statesBefore = current.members.map((m) => set.stateOf(m.host));
    set.install(next, Date.now());
    world.event({ set: set.name, reconfig: next.version, added, statesBefore });
    return { ok: 1 };
  },

  listShards(world, member) {
    if (member.kind !== "mongos") return error(59, "CommandNotFound", "no such command: 'listShards'");
    const cfg = world.sets.get(member.configSet);
    if (!cfg || !cfg.primary) return error(133, "FailedToSatisfyReadPreference", `Could not find host matching read preference { mode: "primary" } for set ${member.configSet}`);
    return { shards: world.shards.map((s) => ({ ...s })), ok: 1 };
  },

  addShard(world, member, body) {
    if (member.kind !== "mongos") return error(59, "CommandNotFound", "no such command: 'addShard'");
    const cfg = world.sets.get(member.configSet);
    if (!cfg || !cfg.primary) return error(133, "FailedToSatisfyReadPreference", `Could not find host matching read preference { mode: "primary" } for set ${member.configSet}`);
    const [setName, seeds] = String(body.addShard).split("/");
    const name = body.name || setName;
    const existing = world.shards.find((s) => s._id === name);
    const set = world.sets.get(setName);
    if (existing) {
      if (existing.host.split("/")[0] === setName) return { shardAdded: name, ok: 1 };
      return error(20, "IllegalOperation", `A shard named ${name} already exists with a different replica set`);
    }
    if (!set || !set.primary || !set.config) {
      return error(96, "OperationFailed", `failed to run command { isMaster: 1 } when attempting to add shard ${body.addShard} :: caused by :: FailedToSatisfyReadPreference: Could not find host matching read preference { mode: "primary" } for set ${setName}`);
    }
    if (set.configsvr) return error(96, "OperationFailed", "Cannot add a config server replica set as a shard");
    for (const h of (seeds || "").split(",")) {
      if (!set.config.members.some((m) => m.host === h)) {
        return error(96, "OperationFailed", `in seed list ${body.addShard}, host ${h} does not belong to replica set ${setName}`);
      }
    }
    const hosts = set.config.members.map((m) => m.host).join(",");
    world.shards.push({ _id: name, host: `${setName}/${hosts}`, state: 1, topologyTime: new Timestamp({ t: Math.floor(Date.now() / 1000), i: 1 }) });
    world.event({ shardAdded: name });
    return { shardAdded: name, ok: 1 };
  },
};

module.exports = { World, DEFAULT_TIMINGS };

// `node deploy/tests/standin-mongod.js [CONFIG_MEMBERS] [SHARD_MEMBERS]` starts a world on
// 127.0.0.1 and prints the environment init-cluster.js needs, for trying the script by hand.
if (require.main === module) {
  (async () => {
    const world = new World();
    world.addSet("cfg", Number(process.argv[2] || 1), true);
    world.addSet("rs0", Number(process.argv[3] || 3), false);
    world.addMongos("cfg");
    await world.listen();
    console.log(`stand-in (not mongod) listening; try:\n  FLE_CONFIG_MEMBERS=${world.hosts("cfg").join(",")} FLE_SHARD_MEMBERS=${world.hosts("rs0").join(",")} FLE_MONGOS=${world.mongos.host} mongosh --nodb --file deploy/mongo/init-cluster.js`);
  })();
}
