// The whole init script (deploy/mongo/init-cluster.js), run by the real mongosh (the Makefile's
// .tools/ install, `make mongosh`) against a STAND-IN for the cluster (standin-mongod.js): small
// servers that speak the wire protocol and answer the replica-set and sharding commands as
// MongoDB's manual says a member in each state answers. It is not mongod; no mongod can run on
// the machines these tests run on. Each case starts its own stand-in on 127.0.0.1 ports and
// passes them to the script the way the Compose `init` service passes its members (FLE_* env).
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { World } = require("./standin-mongod.js");

const ROOT = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(ROOT, "deploy", "mongo", "init-cluster.js");

/** mongosh where the Makefile installs it (MONGOSH := ...). */
function mongoshPath() {
  const m = fs.readFileSync(path.join(ROOT, "Makefile"), "utf8").match(/^MONGOSH\s*:=\s*(\S+)\s*$/m);
  assert.ok(m, "the Makefile names MONGOSH");
  const exe = path.join(ROOT, m[1]);
  assert.ok(fs.existsSync(exe), `${m[1]} is missing: run \`make mongosh\` (make test does)`);
  return exe;
}

function world({ shardMembers = 3, timings } = {}) {
  const w = new World(timings);
  w.addSet("cfg", 1, true);
  w.addSet("rs0", shardMembers, false);
  w.addMongos("cfg");
  return w;
}

/** Runs body with a listening stand-in world, closed afterwards whatever happens. */
async function inWorld(options, body) {
  if (body === undefined) [options, body] = [{}, options];
  const w = world(options);
  await w.listen();
  try {
    return await body(w);
  } finally {
    await w.close();
  }
}

/** Runs the script as the init service does; resolves {code, out, events: the commands it sent}. */
function runInit(w, { shardHosts = w.hosts("rs0"), env = {} } = {}) {
  const from = w.events.length;
  return new Promise((resolve, reject) => {
    const child = spawn(mongoshPath(), ["--nodb", "--quiet", "--norc", "--file", SCRIPT], {
      env: {
        ...process.env,
        FLE_CONFIG_SET: "cfg", FLE_CONFIG_MEMBERS: w.hosts("cfg").join(","),
        FLE_SHARD_SET: "rs0", FLE_SHARD_MEMBERS: shardHosts.join(","),
        FLE_MONGOS: w.mongos.host, FLE_INIT_TIMEOUT_SECONDS: "60", FLE_INIT_POLL_MS: "200",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { out += d; });
    child.on("error", reject);
    child.on("exit", (code) => {
      const events = w.events.slice(from);
      const crash = events.find((e) => e.crash);
      if (crash) return reject(new Error(`the stand-in failed: ${crash.crash}`));
      resolve({ code, out, events, sent: (name) => events.filter((e) => e.command === name) });
    });
  });
}

function states(w, setName) {
  const set = w.sets.get(setName);
  return set.config.members.map((m) => set.stateOf(m.host));
}

function assertReady(w, hosts) {
  const set = w.sets.get("rs0");
  assert.deepEqual(set.config.members.map((m) => m.host), hosts);
  assert.deepEqual(states(w, "rs0").sort(), ["PRIMARY", ...Array(hosts.length - 1).fill("SECONDARY")]);
  assert.deepEqual(states(w, "cfg"), ["PRIMARY"]);
  assert.equal(w.sets.get("cfg").config.configsvr, true);
  assert.deepEqual(w.shards.map((s) => s._id), ["rs0"]);
}

test("a fresh cluster: both sets initiated, every member healthy, the shard added", () =>
  inWorld(async (w) => {
    const r = await runInit(w);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /ready: shard rs0 \(3 members\)/);
    // the first thing asked of an uninitiated member throws NotYetInitialized in mongosh
    assert.ok(r.sent("replSetGetConfig").some((e) => e.codeName === "NotYetInitialized"), "asked before initiating");
    assert.deepEqual(r.sent("replSetInitiate").map((e) => e.ok), [1, 1]);
    assert.equal(r.sent("replSetReconfig").length, 0);
    assert.deepEqual(r.sent("addShard").map((e) => e.ok), [1]);
    assertReady(w, w.hosts("rs0"));
  }));

test("an already initiated cluster: nothing initiated again, the shard added", () =>
  inWorld(async (w) => {
    w.preInitiate("cfg", 1);
    w.preInitiate("rs0", 3);
    const r = await runInit(w);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.sent("replSetInitiate").length, 0, r.out);
    assert.equal(r.sent("replSetReconfig").length, 0);
    assert.deepEqual(r.sent("addShard").map((e) => e.ok), [1]);
    assertReady(w, w.hosts("rs0"));
  }));

test("initiated by someone else between the check and replSetInitiate: AlreadyInitialized is taken as done", () =>
  inWorld(async (w) => {
    // the stand-in initiates the shard's set itself when the script's replSetInitiate for it
    // arrives, so the script's own command is answered AlreadyInitialized (23), as mongod does
    const rs0 = w.hosts("rs0");
    const command = w.command.bind(w);
    w.command = (member, connectionId, body, legacy) => {
      if (body.replSetInitiate && member.setName === "rs0" && !w.sets.get("rs0").config) w.preInitiate("rs0", 3);
      return command(member, connectionId, body, legacy);
    };
    const r = await runInit(w);
    assert.equal(r.code, 0, r.out);
    const rs0Initiates = r.sent("replSetInitiate").filter((e) => rs0.includes(e.host));
    assert.deepEqual(rs0Initiates.map((e) => e.codeName), ["AlreadyInitialized"]);
    assert.match(r.out, /replica set rs0: already initiated/);
    assertReady(w, rs0);
  }));

test("growing a 3-member set to 6: one voting member per reconfig, each after the previous caught up", () =>
  inWorld({ shardMembers: 6 }, async (w) => {
    const six = w.hosts("rs0");
    w.preInitiate("cfg", 1);
    w.preInitiate("rs0", 3, 4);
    w.shards.push({ _id: "rs0", host: `rs0/${six.slice(0, 3).join(",")}`, state: 1 }); // the 3-member run added it
    const r = await runInit(w, { shardHosts: six });
    assert.equal(r.code, 0, r.out);
    const reconfigs = r.events.filter((e) => e.reconfig);
    assert.deepEqual(reconfigs.map((e) => e.added), [[six[3]], [six[4]], [six[5]]]);
    assert.deepEqual(reconfigs.map((e) => e.reconfig), [5, 6, 7], "version + 1 each time");
    for (const e of reconfigs) {
      assert.ok(e.statesBefore.every((s) => s === "PRIMARY" || s === "SECONDARY"), `reconfig ${e.reconfig} while ${e.statesBefore}`);
    }
    // the stand-in refuses (103) more than one voting member per reconfig: none was refused so
    const refused = r.sent("replSetReconfig").filter((e) => e.ok !== 1);
    assert.ok(refused.every((e) => e.codeName === "CurrentConfigNotCommittedYet"), JSON.stringify(refused));
    assert.equal(r.sent("replSetInitiate").length, 0);
    assert.equal(r.sent("addShard").length, 0, "listShards already has rs0");
    assertReady(w, six);
  }));

test("a reconfig refused while the previous config is not committed is retried", () =>
  // the config commits long after the new member has caught up: the script's reconfig comes too
  // early and is answered CurrentConfigNotCommittedYet (308) before it succeeds
  // (8 s: on busy cores the script took over 2.5 s to come back with its next reconfig)
  inWorld({ shardMembers: 5, timings: { commit: 8000 } }, async (w) => {
    const five = w.hosts("rs0");
    w.preInitiate("cfg", 1);
    w.preInitiate("rs0", 3);
    const r = await runInit(w, { shardHosts: five });
    assert.equal(r.code, 0, r.out);
    assert.ok(r.sent("replSetReconfig").some((e) => e.codeName === "CurrentConfigNotCommittedYet"), r.out);
    assert.deepEqual(r.events.filter((e) => e.reconfig).map((e) => e.added), [[five[3]], [five[4]]]);
    assertReady(w, five);
  }));

test("a re-run changes nothing", () =>
  inWorld({ shardMembers: 6 }, async (w) => {
    const first = await runInit(w);
    assert.equal(first.code, 0, first.out);
    const version = w.sets.get("rs0").config.version;
    const again = await runInit(w);
    assert.equal(again.code, 0, again.out);
    for (const name of ["replSetInitiate", "replSetReconfig", "addShard"]) {
      assert.equal(again.sent(name).length, 0, `${name} sent again`);
    }
    assert.equal(w.sets.get("rs0").config.version, version);
    assertReady(w, w.hosts("rs0"));
  }));

test("a misconfigured stack fails at once with the server's reason", () =>
  inWorld(async (w) => {
    const started = Date.now();
    // the members run --replSet cfg; a deadline of 300 s, since mongosh alone took 64 s on overloaded cores
    const r = await runInit(w, { env: { FLE_CONFIG_SET: "wrong", FLE_INIT_TIMEOUT_SECONDS: "300" } });
    assert.equal(r.code, 1);
    assert.match(r.out, /FAILED: replica set wrong: replSetInitiate: InvalidReplicaSetConfig \(93\)/);
    assert.ok(Date.now() - started < 150000, "no waiting out the deadline");
  }));
