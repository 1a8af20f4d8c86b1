// Initiates the Compose stack's sharded cluster and waits until it is healthy; run by the `init`
// service (mongosh --nodb --file init-cluster.js), which exits 0 only when the cluster is ready.
//
//   1. the config-server replica set (FLE_CONFIG_SET, members FLE_CONFIG_MEMBERS);
//   2. the shard's replica set (FLE_SHARD_SET, members FLE_SHARD_MEMBERS: 3 or 6 of them);
//      a set initiated earlier with fewer members gets the missing ones, one per reconfig (a
//      reconfig may add only one voting member), each added once the previous one has caught up,
//      so the 6-member override can follow a 3-member run;
//   3. every member PRIMARY or SECONDARY, one PRIMARY;
//   4. the shard added through mongos (FLE_MONGOS), unless it already is. mongos may not answer
//      before the config servers' set exists, so the init service does not wait for mongos to be
//      healthy; it waits for it here.
// Safe to run again: each step checks before it acts.
//
// Replies: mongosh's runCommand THROWS a MongoServerError (with .code and .codeName) when the
// server answers ok: 0, instead of returning the reply as the legacy shell did; command() turns
// that back into the reply, so every documented answer is handled here, by its code:
//   replSetGetConfig   ok, or NotYetInitialized (94) on a member without a config;
//   replSetInitiate    ok; AlreadyInitialized (23): someone (an earlier run) initiated it, go on;
//                      NodeNotFound (74): a proposed member did not answer the quorum check yet,
//                      retry; InvalidReplicaSetConfig (93): this stack is misconfigured, stop;
//   replSetReconfig    ok; CurrentConfigNotCommittedYet (308), ConfigurationInProgress (109),
//                      NotWritablePrimary (10107), PrimarySteppedDown (189), an election
//                      (InterruptedDueToReplStateChange, 11602), NodeNotFound (74), and
//                      NewReplicaSetConfigurationIncompatible (103, e.g. the version moved
//                      under us): read the config again and retry; InvalidReplicaSetConfig: stop;
//   replSetGetStatus   ok with members in STARTUP/STARTUP2/RECOVERING while they start or catch
//                      up (wait), or NotYetInitialized (94) before the set has a config (wait);
//   listShards/addShard  errors while mongos cannot reach the config servers (wait); addShard of
//                      a shard already added with the same name and set is ok (idempotent).
// Errors that are not replies (no connection yet, server selection timeout) mean "not yet".
//
// The functions above the mongosh-only part are pure (no shell globals) and exported for node's
// tests (deploy/tests/init-cluster.test.js); main() runs only inside mongosh. That test also runs
// this whole file with the real mongosh against a stand-in that answers as MongoDB's manual says
// members answer (deploy/tests/standin-mongod.js; a stand-in, not mongod).

const HEALTHY_STATES = new Set(["PRIMARY", "SECONDARY"]);

/** The error codes this script acts on (MongoDB's src/mongo/base/error_codes.yml). */
const CODES = {
  AlreadyInitialized: 23,
  NodeNotFound: 74,
  InvalidReplicaSetConfig: 93,
  NotYetInitialized: 94,
  NewReplicaSetConfigurationIncompatible: 103,
  ConfigurationInProgress: 109,
  PrimarySteppedDown: 189,
  CurrentConfigNotCommittedYet: 308,
  NotWritablePrimary: 10107,
  InterruptedDueToReplStateChange: 11602,
};

/** "a:1, b:2" -> ["a:1", "b:2"]; every entry host:port, no duplicates, at least one. */
function parseMembers(text, what) {
  const hosts = String(text || "").split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (hosts.length === 0) throw new Error(`${what}: no members given`);
  for (const h of hosts) {
    if (!/^[A-Za-z0-9._-]+:\d{1,5}$/.test(h)) throw new Error(`${what}: "${h}" is not host:port`);
  }
  if (new Set(hosts).size !== hosts.length) throw new Error(`${what}: a member is listed twice`);
  return hosts;
}

/** The replSetInitiate document for a new set. */
function initiateConfig(setName, hosts, configsvr) {
  const cfg = { _id: setName, members: hosts.map((host, i) => ({ _id: i, host })) };
  if (configsvr) cfg.configsvr = true;
  return cfg;
}

/** Desired hosts the current config does not have, in the desired order. */
function missingMembers(config, hosts) {
  const have = new Set(config.members.map((m) => m.host));
  return hosts.filter((h) => !have.has(h));
}

/** Members the current config has that are not desired (reported, never removed automatically). */
function extraMembers(config, hosts) {
  const want = new Set(hosts);
  return config.members.map((m) => m.host).filter((h) => !want.has(h));
}

/** The next config: one member added with a fresh _id, version + 1 (term is the primary's to set). */
function configWithMember(config, host) {
  const next = JSON.parse(JSON.stringify(config));
  const nextId = next.members.reduce((max, m) => Math.max(max, Number(m._id)), -1) + 1;
  next.members.push({ _id: nextId, host });
  next.version = Number(config.version || 0) + 1;
  delete next.term;
  return next;
}

/** What keeps a set from being healthy, as strings ("shard-2:27017 is STARTUP2"); [] when healthy. */
function healthProblems(status, hosts) {
  if (!status || status.ok !== 1 || !Array.isArray(status.members)) {
    return [`replica set status unavailable${status && status.errmsg ? ": " + status.errmsg : ""}`];
  }
  const byHost = new Map(status.members.map((m) => [m.name, m]));
  const problems = [];
  for (const h of hosts) {
    const m = byHost.get(h);
    if (!m) problems.push(`${h} is not in the set yet`);
    else if (m.health !== 1) problems.push(`${h} is unreachable`);
    else if (!HEALTHY_STATES.has(m.stateStr)) problems.push(`${h} is ${m.stateStr}`);
  }
  const primaries = status.members.filter((m) => m.stateStr === "PRIMARY").length;
  if (primaries !== 1) problems.push(`${primaries} primaries`);
  return problems;
}

/**
 * Where the set stands, from each member's hello reply (null: the member did not answer):
 *   {kind: "primary", host}      a member is (or names) the writable primary;
 *   {kind: "uninitiated", host}  every member answered and none has a config: initiate on host;
 *   {kind: "wait", why, configured}  no primary yet although a member has a config (configured:
 *                                true: initiated, electing), or a member is not answering;
 *   {kind: "fail", why}          a member belongs to another replica set.
 */
function setView(setName, hellos) {
  for (const { host, reply } of hellos) {
    if (reply && reply.setName && reply.setName !== setName) {
      return { kind: "fail", why: `${host} belongs to replica set ${reply.setName}, not ${setName}` };
    }
  }
  const answered = hellos.filter((h) => h.reply);
  const writable = answered.find((h) => h.reply.setName && (h.reply.isWritablePrimary || h.reply.ismaster));
  if (writable) return { kind: "primary", host: writable.host };
  const named = answered.find((h) => h.reply.setName && h.reply.primary);
  if (named) return { kind: "primary", host: named.reply.primary };
  const configured = answered.filter((h) => h.reply.setName);
  if (configured.length > 0) {
    return { kind: "wait", configured: true,
      why: `no primary yet (${configured.map((h) => h.host).join(", ")} ${configured.length > 1 ? "have" : "has"} a config)` };
  }
  const silent = hellos.filter((h) => !h.reply).map((h) => h.host);
  if (silent.length > 0) return { kind: "wait", why: `${silent.join(", ")} not answering` };
  return { kind: "uninitiated", host: hellos[0].host };
}

/** replSetGetConfig's reply: {config} when the member has one, {config: null} before; else retry. */
function configOutcome(reply) {
  if (reply.ok === 1 && reply.config) return { action: "done", config: reply.config };
  if (reply.code === CODES.NotYetInitialized) return { action: "done", config: null };
  return { action: "retry", why: describe(reply) };
}

/** replSetInitiate's reply: done (initiated now, or already: AlreadyInitialized), retry, or fail. */
function initiateOutcome(reply) {
  if (reply.ok === 1) return { action: "done", already: false };
  if (reply.code === CODES.AlreadyInitialized) return { action: "done", already: true };
  if (reply.code === CODES.InvalidReplicaSetConfig) return { action: "fail", why: describe(reply) };
  return { action: "retry", why: describe(reply) }; // NodeNotFound: a member not ready for the quorum check
}

/** replSetReconfig's reply: done, retry (read the config again first), or fail. */
function reconfigOutcome(reply) {
  if (reply.ok === 1) return { action: "done" };
  if (reply.code === CODES.InvalidReplicaSetConfig) return { action: "fail", why: describe(reply) };
  return { action: "retry", why: describe(reply) };
}

function describe(reply) {
  return `${reply.codeName || "error"}${reply.code !== undefined ? ` (${reply.code})` : ""}: ${reply.errmsg || "no message"}`;
}

/** mongos's addShard seed list: "rs0/h1:27017,h2:27017". */
function shardConnectionString(setName, hosts) {
  return `${setName}/${hosts.join(",")}`;
}

/** Whether listShards already has the set (its host string starts with "rs0/"). */
function shardPresent(listShards, setName) {
  return (listShards.shards || []).some((s) => s._id === setName || String(s.host).startsWith(setName + "/"));
}

// ---- mongosh only below: connections, retries, waiting ----

let pollMs = 2000; // FLE_INIT_POLL_MS

function log(msg) {
  print(`init-cluster: ${msg}`);
}

/** An error retry() does not swallow: the stack is misconfigured and waiting will not help. */
function fatal(message) {
  const e = new Error(message);
  e.fatal = true;
  return e;
}

/**
 * The command's reply, as the server sent it, even when mongosh throws for ok: 0 (a
 * MongoServerError carries the reply in errorResponse, and code/codeName/message). Errors that
 * are not replies (network, server selection) are thrown on.
 */
function command(admin, doc) {
  try {
    // assigned before it is returned: mongosh's async rewriting awaits the call here, inside the
    // try (a bare `return admin.runCommand(doc)` let the rejection escape the catch)
    const reply = admin.runCommand(doc);
    return reply;
  } catch (e) {
    if (e && e.errorResponse && typeof e.errorResponse === "object") return { ...e.errorResponse, ok: 0 };
    if (e && e.name === "MongoServerError" && typeof e.code === "number") {
      return { ok: 0, code: e.code, codeName: e.codeName, errmsg: e.message };
    }
    throw e;
  }
}

/**
 * Calls attempt() every FLE_INIT_POLL_MS until it returns {done: true, value}; {done: false, why}
 * or an exception means "not yet", except a fatal() one. Past the deadline, fails with what the
 * last attempt said.
 */
function retry(what, deadline, attempt) {
  let last = "no attempt";
  for (;;) {
    try {
      const r = attempt();
      if (r.done) return r.value;
      last = r.why;
    } catch (e) {
      if (e && e.fatal) throw e;
      last = (e && e.message) || String(e);
    }
    if (Date.now() > deadline) throw new Error(`${what}: gave up waiting (${last})`);
    sleep(pollMs);
  }
}

const admins = new Map(); // host -> admin db of a direct connection, reused (the driver reconnects)

function adminOf(host) {
  if (!admins.has(host)) {
    admins.set(host, new Mongo(`mongodb://${host}/?directConnection=true&serverSelectionTimeoutMS=3000`).getDB("admin"));
  }
  return admins.get(host);
}

function helloOf(host) {
  try {
    const reply = command(adminOf(host), { hello: 1 });
    return reply;
  } catch (e) {
    return null; // not answering (yet)
  }
}

function viewOf(setName, hosts) {
  return setView(setName, hosts.map((host) => ({ host, reply: helloOf(host) })));
}

/** The admin db of the set's primary, once there is one. */
function primaryAdmin(setName, hosts, deadline) {
  return retry(`replica set ${setName}: find its primary`, deadline, () => {
    const view = viewOf(setName, hosts);
    if (view.kind === "fail") throw fatal(view.why);
    if (view.kind === "primary") return { done: true, value: adminOf(view.host) };
    return { done: false, why: view.kind === "uninitiated" ? "not initiated" : view.why };
  });
}

/** Initiates the set unless some member already has a config (then it leaves it as it is). */
function ensureInitiated(setName, hosts, configsvr, deadline) {
  const what = `replica set ${setName}`;
  retry(`${what}: initiated`, deadline, () => {
    const view = viewOf(setName, hosts);
    if (view.kind === "fail") throw fatal(view.why);
    if (view.kind === "primary") return { done: true };
    if (view.kind === "wait") return { done: !!view.configured, why: view.why }; // configured: initiated, electing
    const admin = adminOf(view.host);
    const current = configOutcome(command(admin, { replSetGetConfig: 1 }));
    if (current.action === "retry") return { done: false, why: current.why };
    if (current.config) return { done: true };
    log(`${what}: initiating with ${hosts.join(", ")}`);
    const outcome = initiateOutcome(command(admin, { replSetInitiate: initiateConfig(setName, hosts, configsvr) }));
    if (outcome.action === "fail") throw fatal(`${what}: replSetInitiate: ${outcome.why}`);
    if (outcome.action === "retry") return { done: false, why: `replSetInitiate: ${outcome.why}` };
    if (outcome.already) log(`${what}: already initiated`);
    return { done: true };
  });
}

/** Adds the desired members the config lacks, one per reconfig, each after the set is healthy. */
function ensureMembers(setName, hosts, deadline) {
  const what = `replica set ${setName}`;
  let reported = false;
  retry(`${what}: every member in its config`, deadline, () => {
    const primary = primaryAdmin(setName, hosts, deadline);
    const current = configOutcome(command(primary, { replSetGetConfig: 1 }));
    if (current.action === "retry" || !current.config) return { done: false, why: current.why || "no config yet" };
    const config = current.config;
    if (!reported) {
      for (const extra of extraMembers(config, hosts)) {
        log(`${what}: member ${extra} is not in this stack's list; left as it is (remove it by hand if it is gone)`);
      }
      reported = true;
    }
    const missing = missingMembers(config, hosts);
    if (missing.length === 0) return { done: true };
    // a reconfig needs the previous one committed, and the member added before to have caught up
    waitHealthy(setName, config.members.map((m) => m.host), deadline);
    const host = missing[0];
    log(`${what}: adding ${host} (config version ${config.version} -> ${Number(config.version) + 1})`);
    const outcome = reconfigOutcome(command(primary, { replSetReconfig: configWithMember(config, host) }));
    if (outcome.action === "fail") throw fatal(`${what}: adding ${host}: ${outcome.why}`);
    if (outcome.action === "retry") {
      log(`${what}: adding ${host}: ${outcome.why}; trying again`);
      return { done: false, why: outcome.why };
    }
    return { done: false, why: `${host} added; reading the config again` };
  });
}

/** The set's replSetGetStatus, from its primary when it has one, else from any member with a config. */
function statusOf(setName, hosts) {
  const view = viewOf(setName, hosts);
  if (view.kind === "primary") return command(adminOf(view.host), { replSetGetStatus: 1 });
  let last = null;
  for (const h of hosts) {
    try {
      const r = command(adminOf(h), { replSetGetStatus: 1 });
      if (r.ok === 1) return r;
      last = r;
    } catch (e) {
      // not answering; try the next
    }
  }
  return last || { ok: 0, errmsg: `no member of ${hosts.join(", ")} answers` };
}

function waitHealthy(setName, hosts, deadline) {
  let reported = "";
  retry(`replica set ${setName} healthy`, deadline, () => {
    const now = healthProblems(statusOf(setName, hosts), hosts).join("; ");
    if (now && now !== reported) log(`replica set ${setName}: waiting: ${now}`);
    reported = now;
    return { done: now === "", why: now };
  });
  log(`replica set ${setName}: ${hosts.length} member(s) healthy`);
}

function ensureReplicaSet(setName, hosts, configsvr, deadline) {
  // Every member must answer before initiating, or the set starts without it.
  for (const h of hosts) {
    retry(`replica set ${setName}: ${h} answers`, deadline, () => {
      const r = command(adminOf(h), { ping: 1 });
      return { done: r.ok === 1, why: describe(r) };
    });
  }
  ensureInitiated(setName, hosts, configsvr, deadline);
  ensureMembers(setName, hosts, deadline);
  waitHealthy(setName, hosts, deadline);
}

function ensureShard(mongos, setName, hosts, deadline) {
  let admin = null; // connected inside the retry: mongos may still be starting
  retry(`shard ${setName} added through ${mongos}`, deadline, () => {
    admin = admin || new Mongo(`mongodb://${mongos}/?serverSelectionTimeoutMS=3000`).getDB("admin");
    const shards = command(admin, { listShards: 1 });
    if (shards.ok !== 1) return { done: false, why: `listShards: ${describe(shards)}` };
    const same = (shards.shards || []).find((s) => s._id === setName);
    if (same && !String(same.host).startsWith(setName + "/")) {
      throw fatal(`shard ${setName} exists with another replica set: ${same.host}`);
    }
    if (shardPresent(shards, setName)) return { done: true };
    const r = command(admin, { addShard: shardConnectionString(setName, hosts), name: setName });
    if (r.ok === 1) log(`shard ${setName} added through ${mongos}`);
    return { done: r.ok === 1, why: `addShard: ${describe(r)}` };
  });
}

function main() {
  const env = process.env;
  const deadline = Date.now() + 1000 * Number(env.FLE_INIT_TIMEOUT_SECONDS || 600);
  pollMs = Number(env.FLE_INIT_POLL_MS || 2000);
  const configSet = env.FLE_CONFIG_SET || "cfg";
  const shardSet = env.FLE_SHARD_SET || "rs0";
  const configHosts = parseMembers(env.FLE_CONFIG_MEMBERS, "FLE_CONFIG_MEMBERS");
  const shardHosts = parseMembers(env.FLE_SHARD_MEMBERS, "FLE_SHARD_MEMBERS");
  const mongos = env.FLE_MONGOS || "mongos:27017";
  ensureReplicaSet(configSet, configHosts, true, deadline);
  ensureReplicaSet(shardSet, shardHosts, false, deadline);
  ensureShard(mongos, shardSet, shardHosts, deadline);
  log(`ready: shard ${shardSet} (${shardHosts.length} members) behind ${mongos}`);
}

if (typeof module !== "undefined" && module.exports) {
  module.exports = {
    CODES, parseMembers, initiateConfig, missingMembers, extraMembers, configWithMember, healthProblems,
    setView, configOutcome, initiateOutcome, reconfigOutcome, shardConnectionString, shardPresent,
  };
}

if (typeof Mongo === "function" && typeof quit === "function") {
  let status = 0;
  try {
    main();
  } catch (e) {
    print(`init-cluster: FAILED: ${e.message || e}`);
    status = 1;
  }
  quit(status);
}
