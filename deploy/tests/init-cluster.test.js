// The cluster init script's decisions (deploy/mongo/init-cluster.js), with replica-set documents
// shaped as mongod 8.0 returns them. The whole script, run by the real mongosh against a stand-in
// for the members, is tested in init-cluster-standin.test.js (no mongod can run here).
const test = require("node:test");
const assert = require("node:assert/strict");
const init = require("../mongo/init-cluster.js");

const three = ["shard-1:27017", "shard-2:27017", "shard-3:27017"];
const six = [...three, "shard-4:27017", "shard-5:27017", "shard-6:27017"];

test("member lists: host:port, no duplicates, not empty", () => {
  assert.deepEqual(init.parseMembers(" shard-1:27017,shard-2:27017 ,shard-3:27017", "X"), three);
  assert.throws(() => init.parseMembers("", "FLE_SHARD_MEMBERS"), /FLE_SHARD_MEMBERS: no members/);
  assert.throws(() => init.parseMembers(undefined, "X"), /no members/);
  assert.throws(() => init.parseMembers("shard-1", "X"), /"shard-1" is not host:port/);
  assert.throws(() => init.parseMembers("a:1,a:1", "X"), /listed twice/);
});

test("initiate documents: numbered members, configsvr only for the config servers", () => {
  assert.deepEqual(init.initiateConfig("rs0", three, false), {
    _id: "rs0",
    members: [{ _id: 0, host: three[0] }, { _id: 1, host: three[1] }, { _id: 2, host: three[2] }],
  });
  assert.equal(init.initiateConfig("cfg", ["cfg-1:27017"], true).configsvr, true);
});

test("growing a 3-member set to 6: one member per reconfig, fresh ids, version + 1", () => {
  let config = { _id: "rs0", version: 1, term: 1, members: init.initiateConfig("rs0", three, false).members };
  assert.deepEqual(init.missingMembers(config, six), six.slice(3));
  for (const host of init.missingMembers(config, six)) {
    const next = init.configWithMember(config, host);
    assert.equal(next.members.length, config.members.length + 1);
    assert.equal(next.version, config.version + 1);
    assert.equal(new Set(next.members.map((m) => m._id)).size, next.members.length);
    assert.equal(config.members.length, next.members.length - 1, "the current config is not modified");
    config = next;
  }
  assert.deepEqual(config.members.map((m) => m.host), six);
  assert.deepEqual(init.missingMembers(config, six), []);
  assert.deepEqual(init.extraMembers(config, three), six.slice(3), "a 6-member set seen from the 3-member stack");
});

test("ids continue after the largest one, even with gaps", () => {
  const config = { version: 7, members: [{ _id: 0, host: "a:1" }, { _id: 5, host: "b:1" }] };
  assert.equal(init.configWithMember(config, "c:1").members[2]._id, 6);
});

function status(states) {
  return {
    ok: 1,
    set: "rs0",
    members: Object.entries(states).map(([name, stateStr], i) => ({ _id: i, name, health: stateStr === "(not reachable/healthy)" ? 0 : 1, stateStr })),
  };
}

test("healthy: every desired member PRIMARY or SECONDARY, exactly one PRIMARY", () => {
  assert.deepEqual(init.healthProblems(status({ [three[0]]: "PRIMARY", [three[1]]: "SECONDARY", [three[2]]: "SECONDARY" }), three), []);
});

test("not healthy yet: each problem named", () => {
  assert.deepEqual(init.healthProblems(status({ [three[0]]: "PRIMARY", [three[1]]: "STARTUP2", [three[2]]: "SECONDARY" }), three),
    ["shard-2:27017 is STARTUP2"]);
  assert.deepEqual(init.healthProblems(status({ [three[0]]: "SECONDARY", [three[1]]: "SECONDARY" }), three),
    ["shard-3:27017 is not in the set yet", "0 primaries"]);
  assert.deepEqual(init.healthProblems(status({ [three[0]]: "PRIMARY", [three[1]]: "(not reachable/healthy)", [three[2]]: "SECONDARY" }), three),
    ["shard-2:27017 is unreachable"]);
  assert.deepEqual(init.healthProblems({ ok: 0, errmsg: "no replset config has been received", code: 94 }, three),
    ["replica set status unavailable: no replset config has been received"]);
});

test("addShard seed list and listShards lookup", () => {
  assert.equal(init.shardConnectionString("rs0", three), "rs0/shard-1:27017,shard-2:27017,shard-3:27017");
  const listShards = { ok: 1, shards: [{ _id: "rs0", host: "rs0/shard-1:27017,shard-2:27017,shard-3:27017", state: 1 }] };
  assert.equal(init.shardPresent(listShards, "rs0"), true);
  assert.equal(init.shardPresent({ ok: 1, shards: [] }, "rs0"), false);
  assert.equal(init.shardPresent({ ok: 1, shards: [{ _id: "rs1", host: "rs1/x:1" }] }, "rs0"), false);
});

test("configWithMember leaves term to the primary", () => {
  const next = init.configWithMember({ _id: "rs0", version: 3, term: 2, members: [{ _id: 0, host: "a:1" }] }, "b:1");
  assert.equal(next.term, undefined);
  assert.equal(next.version, 4);
});

const hello = {
  uninitiated: { isWritablePrimary: false, secondary: false, isreplicaset: true, info: "Does not have a valid replica set config", ok: 1 },
  primary: (set, me) => ({ isWritablePrimary: true, secondary: false, setName: set, primary: me, me, ok: 1 }),
  secondary: (set, me, primary) => ({ isWritablePrimary: false, secondary: true, setName: set, ...(primary ? { primary } : {}), me, ok: 1 }),
};

test("where a set stands, from its members' hello replies", () => {
  const [a, b, c] = three;
  const view = (replies) => init.setView("rs0", replies.map((reply, i) => ({ host: three[i], reply })));
  assert.deepEqual(view([hello.uninitiated, hello.uninitiated, hello.uninitiated]), { kind: "uninitiated", host: a });
  assert.equal(view([hello.uninitiated, null, hello.uninitiated]).kind, "wait", "initiate only when every member answers");
  assert.deepEqual(view([hello.secondary("rs0", a, c), hello.secondary("rs0", b, c), hello.primary("rs0", c)]), { kind: "primary", host: c });
  assert.deepEqual(view([hello.secondary("rs0", a, c), null, null]), { kind: "primary", host: c }, "named by a secondary");
  const electing = view([hello.secondary("rs0", a), hello.secondary("rs0", b), hello.uninitiated]);
  assert.equal(electing.kind, "wait");
  assert.equal(electing.configured, true, "initiated already: do not initiate again");
  // a set grown from 3 to 6: the new members have no config yet, the old ones have a primary
  const six3 = init.setView("rs0", six.map((host, i) => ({ host, reply: i === 0 ? hello.primary("rs0", host) : i < 3 ? hello.secondary("rs0", host, six[0]) : hello.uninitiated })));
  assert.deepEqual(six3, { kind: "primary", host: six[0] });
  assert.equal(view([hello.primary("other", a), hello.uninitiated, hello.uninitiated]).kind, "fail");
});

// Replies as mongod sends them (mongosh throws these; the script turns them back into replies).
const reply = {
  ok: { ok: 1 },
  notYet: { ok: 0, errmsg: "no replset config has been received", code: 94, codeName: "NotYetInitialized" },
  already: { ok: 0, errmsg: "already initialized", code: 23, codeName: "AlreadyInitialized" },
  quorum: { ok: 0, errmsg: "replSetInitiate quorum check failed because not all proposed set members responded affirmatively", code: 74, codeName: "NodeNotFound" },
  invalid: { ok: 0, errmsg: "Attempting to initiate a replica set with name x, but command line reports rs0; rejecting", code: 93, codeName: "InvalidReplicaSetConfig" },
  notCommitted: { ok: 0, errmsg: "Cannot run replSetReconfig because the current config is not committed.", code: 308, codeName: "CurrentConfigNotCommittedYet" },
  inProgress: { ok: 0, errmsg: "Cannot run replSetReconfig because the node is currently updating its configuration", code: 109, codeName: "ConfigurationInProgress" },
  incompatible: { ok: 0, errmsg: "New replica set configuration version must be greater than old", code: 103, codeName: "NewReplicaSetConfigurationIncompatible" },
  notPrimary: { ok: 0, errmsg: "replSetReconfig should only be run on a writable PRIMARY", code: 10107, codeName: "NotWritablePrimary" },
};

test("replSetGetConfig: a config, none yet (NotYetInitialized), or ask again", () => {
  const config = { _id: "rs0", version: 1, members: [] };
  assert.deepEqual(init.configOutcome({ ok: 1, config }), { action: "done", config });
  assert.deepEqual(init.configOutcome(reply.notYet), { action: "done", config: null });
  assert.equal(init.configOutcome(reply.notPrimary).action, "retry");
});

test("replSetInitiate: AlreadyInitialized is done, a quorum failure is retried, an invalid config stops", () => {
  assert.deepEqual(init.initiateOutcome(reply.ok), { action: "done", already: false });
  assert.deepEqual(init.initiateOutcome(reply.already), { action: "done", already: true });
  assert.equal(init.initiateOutcome(reply.quorum).action, "retry");
  assert.equal(init.initiateOutcome(reply.invalid).action, "fail");
  assert.match(init.initiateOutcome(reply.invalid).why, /^InvalidReplicaSetConfig \(93\): Attempting/);
});

test("replSetReconfig: the documented transient refusals are retried, an invalid config stops", () => {
  assert.equal(init.reconfigOutcome(reply.ok).action, "done");
  for (const r of [reply.notCommitted, reply.inProgress, reply.incompatible, reply.notPrimary, reply.quorum]) {
    assert.equal(init.reconfigOutcome(r).action, "retry", r.codeName);
  }
  assert.equal(init.reconfigOutcome({ ...reply.invalid, errmsg: "Found two member configurations with same _id field" }).action, "fail");
});
