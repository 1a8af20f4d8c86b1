// Initiates the Compose stack's sharded cluster and waits until it is healthy; run by the `init`
// service (mongosh --nodb --file init-cluster.js), which exits 0 only when the cluster is ready.
//
//   1. the config-server replica set (FLE_CONFIG_SET, members FLE_CONFIG_MEMBERS);
//   2. the shard's replica set (FLE_SHARD_SET, members FLE_SHARD_MEMBERS: 3 or 6 of them);
//      a set initiated earlier with fewer members gets the missing ones, one at a time (a
//      reconfig may add only one voting member), so the 6-member override can follow a 3-member run;
//   3. every member PRIMARY or SECONDARY, one PRIMARY;
//   4. the shard added through mongos (FLE_MONGOS), unless it already is. mongos may not answer
//      before the config servers' set exists, so the init service does not wait for mongos to be
//      healthy; it waits for it here.
// Safe to run again: each step checks before it acts.
//
// The functions above main() are pure (no shell globals) and exported for node's tests
// (deploy/tests/init-cluster.test.js); main() runs only inside mongosh.

const HEALTHY_STATES = new Set(["PRIMARY", "SECONDARY"]);

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

/** The next config: one member added with a fresh _id, version + 1. */
function configWithMember(config, host) {
  const next = JSON.parse(JSON.stringify(config));
  const nextId = next.members.reduce((max, m) => Math.max(max, m._id), -1) + 1;
  next.members.push({ _id: nextId, host });
  next.version = (config.version || 0) + 1;
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

/** mongos's addShard seed list: "rs0/h1:27017,h2:27017". */
function shardConnectionString(setName, hosts) {
  return `${setName}/${hosts.join(",")}`;
}

/** Whether listShards already has the set (its host string starts with "rs0/"). */
function shardPresent(listShards, setName) {
  return (listShards.shards || []).some((s) => s._id === setName || String(s.host).startsWith(setName + "/"));
}

// ---- mongosh only below: connections, retries, waiting ----

function log(msg) {
  print(`init-cluster: ${msg}`);
}

/**
 * Calls attempt() every 2 s until it returns {done: true, value}; {done: false, why} or an
 * exception means "not yet". Past the deadline, fails with what the last attempt said.
 */
function retry(what, deadline, attempt) {
  let last = "no attempt";
  for (;;) {
    try {
      const r = attempt();
      if (r.done) return r.value;
      last = r.why;
    } catch (e) {
      last = e.message || String(e);
    }
    if (Date.now() > deadline) throw new Error(`${what}: gave up waiting (${last})`);
    sleep(2000);
  }
}

const admins = new Map(); // host -> admin db of a direct connection, reused (the driver reconnects)

function adminOf(host) {
  if (!admins.has(host)) {
    admins.set(host, new Mongo(`mongodb://${host}/?directConnection=true&serverSelectionTimeoutMS=3000`).getDB("admin"));
  }
  return admins.get(host);
}

/** The admin db of the set's primary, or of any answering member while the set has no config. */
function primaryAdmin(setName, hosts, deadline) {
  return retry(`replica set ${setName}: find its primary`, deadline, () => {
    for (const h of hosts) {
      try {
        const hello = adminOf(h).runCommand({ hello: 1 });
        if (hello.isWritablePrimary) return { done: true, value: adminOf(h) };
        if (hello.primary) return { done: true, value: adminOf(hello.primary) };
        if (!hello.setName) return { done: true, value: adminOf(h) }; // not initiated yet
      } catch (e) {
        // this member is not answering; try the next
      }
    }
    return { done: false, why: `no primary among ${hosts.join(", ")}` };
  });
}

function ensureReplicaSet(setName, hosts, configsvr, deadline) {
  const what = `replica set ${setName}`;
  // Every member must answer before initiating, or the set starts without it.
  for (const h of hosts) {
    retry(`${what}: ${h} answers`, deadline, () => ({ done: adminOf(h).runCommand({ ping: 1 }).ok === 1, why: "ping failed" }));
  }
  const admin = primaryAdmin(setName, hosts, deadline);
  const current = admin.runCommand({ replSetGetConfig: 1 });
  if (current.ok !== 1) {
    log(`${what}: initiating with ${hosts.join(", ")}`);
    const r = admin.runCommand({ replSetInitiate: initiateConfig(setName, hosts, configsvr) });
    if (r.ok !== 1 && r.codeName !== "AlreadyInitialized") throw new Error(`${what}: replSetInitiate: ${r.errmsg}`);
  } else {
    for (const extra of extraMembers(current.config, hosts)) {
      log(`${what}: member ${extra} is not in this stack's list; left as it is (remove it by hand if it is gone)`);
    }
    const present = current.config.members.map((m) => m.host);
    for (const host of missingMembers(current.config, hosts)) {
      waitHealthy(setName, present, deadline); // a reconfig needs the previous one committed
      const primary = primaryAdmin(setName, present, deadline);
      log(`${what}: adding ${host}`);
      const r = primary.runCommand({ replSetReconfig: configWithMember(primary.runCommand({ replSetGetConfig: 1 }).config, host) });
      if (r.ok !== 1) throw new Error(`${what}: adding ${host}: ${r.errmsg}`);
      present.push(host);
    }
  }
  waitHealthy(setName, hosts, deadline);
}

function waitHealthy(setName, hosts, deadline) {
  let reported = "";
  retry(`replica set ${setName} healthy`, deadline, () => {
    const status = primaryAdmin(setName, hosts, deadline).runCommand({ replSetGetStatus: 1 });
    const now = healthProblems(status, hosts).join("; ");
    if (now && now !== reported) log(`replica set ${setName}: waiting: ${now}`);
    reported = now;
    return { done: now === "", why: now };
  });
  log(`replica set ${setName}: ${hosts.length} member(s) healthy`);
}

function ensureShard(mongos, setName, hosts, deadline) {
  let admin = null; // connected inside the retry: mongos may still be starting
  retry(`shard ${setName} added through ${mongos}`, deadline, () => {
    admin = admin || new Mongo(`mongodb://${mongos}/?serverSelectionTimeoutMS=3000`).getDB("admin");
    const shards = admin.runCommand({ listShards: 1 });
    if (shards.ok === 1 && shardPresent(shards, setName)) return { done: true };
    const r = admin.runCommand({ addShard: shardConnectionString(setName, hosts), name: setName });
    if (r.ok === 1) log(`shard ${setName} added through ${mongos}`);
    return { done: r.ok === 1, why: r.errmsg };
  });
}

function main() {
  const env = process.env;
  const deadline = Date.now() + 1000 * Number(env.FLE_INIT_TIMEOUT_SECONDS || 600);
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
    parseMembers, initiateConfig, missingMembers, extraMembers, configWithMember, healthProblems,
    shardConnectionString, shardPresent,
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
