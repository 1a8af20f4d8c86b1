// The cluster init script's decisions (deploy/mongo/init-cluster.js), with replica-set documents
// shaped as mongod 8.0 returns them. The parts that talk to mongod run only inside mongosh in the
// Compose stack; no mongod can run on the machines these tests run on.
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
