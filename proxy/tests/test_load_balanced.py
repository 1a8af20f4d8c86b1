"""Several proxies as one service (issue 44): pymongo in load-balanced mode
(`?loadBalanced=true`) through a TCP balancer (balancer.py) in front of two proxies, which
encrypt the same collection in front of one replica set (replset_server.py: it keeps retryable
writes' records, as mongod's session table does). Each proxy answers the handshake as a mongos
behind a balancer, with its own serviceId. The same load with both proxies in the driver's seed
list instead (`mongodb://p1,p2/`): each is a mongos to the driver, which sends a cursor's
getMore to the proxy that opened it and retries a write on the other.

Each proxy is named (`instance:`) and keeps its own audit trail, every line naming it: after the
run (the killed proxy started again, which records a line its death cut short) `audit verify`
takes both trails at once and checks each as a chain of its own, and every acknowledged write
has its line.

Under load — writers inserting, readers running queries the proxy evaluates itself (a range on
an encrypted field) and reading them in batches through getMore — one proxy is killed. Then: no
acknowledged write is lost and none is applied twice (the driver retries a write that met the
dead proxy through the balancer on the other, and the set answers the retry from its record);
every cursor either completes with every document or fails with a connection error (a cursor
lives on the proxy that opened it); after the kill, everything goes on through the other. Before
the load, a transaction's two inserts reach the set as one transaction (the driver keeps it on
one connection, so on one proxy)."""
import json
import subprocess
import threading

import pytest
from pymongo.errors import ConnectionFailure, PyMongoError

from balancer import RoundRobinBalancer
from conftest import JAR, EncryptingProxy, client
from replset_server import ReplicaSet

OPERATIONS = 10_000
KILL_AT = 3_000
PRELOADED = 400
RANGE = 50  # documents per evaluated query, read 10 at a time


class NamedProxy(EncryptingProxy):
    """A proxy with its instance: name and an audit trail of its own."""

    def __init__(self, tmp, backend_port, kms, policy, name, upstream):
        self.trail = tmp / f"{name}-audit" / "audit.log"
        super().__init__(tmp, backend_port, kms, policy, name=name, upstream=upstream)

    def write(self, collections):
        super().write(collections)
        self.config.write_text(self.config.read_text() + f"instance: {self.name}\n"
                               f"audit:\n  file: {self.trail}\n  key: {self.kms.keys['AES-256']}\n")

    @property
    def name(self):
        return self.log_path.stem

    def trail_files(self):
        return sorted(self.trail.parent.glob(self.trail.name + ".*")) + [self.trail]


@pytest.fixture()
def service(workdir, backend, kms, request):
    rs = ReplicaSet(backend.port)
    policy = f"  lb.items: {{ key: {kms.keys['AES-256']}, fields: {{ x: {{}} }} }}\n"
    mode = "b" if "balancer" in request.node.name else "s"
    proxies = [NamedProxy(workdir, backend.port, kms, policy, f"proxy-lb{mode}-{i}", rs.uri()).start() for i in range(2)]
    balancer = RoundRobinBalancer([p.port for p in proxies])
    yield rs, proxies, balancer
    balancer.close()
    for p in proxies:
        p.stop()
    rs.close()


@pytest.mark.parametrize("mode", ["balancer", "seed list"])
def test_two_proxies_lose_no_write_when_one_is_killed(service, mode):
    rs, proxies, balancer = service
    uri = balancer.uri() if mode == "balancer" else f"mongodb://{','.join(f'127.0.0.1:{p.port}' for p in proxies)}/"
    app = client(uri, serverSelectionTimeoutMS=30_000)
    items = app.lb.items
    items.drop()
    items.insert_many([{"_id": f"pre-{i}", "g": "pre", "x": i} for i in range(PRELOADED)])
    app.admin.command("ping")  # both seeds known before the load, in a seed list
    with app.start_session() as session:  # a transaction stays on its connection (the driver pins it)
        with session.start_transaction():
            items.insert_one({"_id": "tx-1", "g": "tx", "x": 1}, session=session)
            items.insert_one({"_id": "tx-2", "g": "tx", "x": 2}, session=session)
    assert sorted(d["x"] for d in items.find({"g": "tx"})) == [1, 2]
    inserts = [body for m in rs.members for name, body, _ in m.commands() if name == "insert" and "autocommit" in body]
    assert len(inserts) == 2 and {b["txnNumber"] for b in inserts} == {inserts[0]["txnNumber"]} \
        and all(b["autocommit"] is False for b in inserts), "both inserts went as one transaction"
    assert app.topology_description.topology_type_name == ("LoadBalanced" if mode == "balancer" else "Sharded")

    lock = threading.Lock()
    done = [0]
    acked, write_errors = [], []
    cursors = {"complete": 0, "after_kill": 0, "failed": []}
    killed = threading.Event()
    stop = threading.Event()

    def count(n=1):
        with lock:
            done[0] += n
            total = done[0]
        if total >= KILL_AT and not killed.is_set():
            killed.set()
            proxies[0].proc.kill()  # a crash: no goodbye to its connections
        if total >= OPERATIONS:
            stop.set()

    def writer(t):
        k = 0
        while not stop.is_set():
            _id = f"w{t}-{k}"
            try:
                items.insert_one({"_id": _id, "g": "w", "x": k})
                with lock:
                    acked.append(_id)
            except PyMongoError as e:
                write_errors.append(f"{_id}: {type(e).__name__}: {e}")
            k += 1
            count()

    def reader(t):
        lo = t * 37
        while not stop.is_set():
            lo = (lo + 53) % (PRELOADED - RANGE)
            after = killed.is_set()
            try:
                got = list(items.find({"g": "pre", "x": {"$gte": lo, "$lt": lo + RANGE}}).batch_size(10))
                assert sorted(d["x"] for d in got) == list(range(lo, lo + RANGE))
                with lock:
                    cursors["complete"] += 1
                    cursors["after_kill"] += after
            except ConnectionFailure as e:  # the cursor's proxy went away: a clear error, no wrong answer
                cursors["failed"].append(f"{type(e).__name__}: {e}")
            count(RANGE // 10 + 1)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(3)] + \
              [threading.Thread(target=reader, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "the load did not finish"
    assert killed.is_set() and not proxies[0].alive()
    if mode == "balancer":
        assert balancer.accepted[0] > 0 and balancer.accepted[1] > 0, balancer.accepted

    assert write_errors == [], write_errors[:5]
    stored = {d["_id"] for d in items.find({"g": "w"}, {"_id": 1})}
    assert set(acked) <= stored, f"acknowledged writes lost: {sorted(set(acked) - stored)[:5]}"
    assert cursors["complete"] > 0 and cursors["after_kill"] > 0, cursors
    assert len(cursors["failed"]) <= 2, cursors["failed"]  # at most the cursors open on the killed proxy
    for x in items.find({"g": "w"}, {"x": 1}).limit(5):
        assert isinstance(x["x"], int), "decrypted through the proxy that is left"
    with client(f"mongodb://127.0.0.1:{rs.members[0].port}/?directConnection=true") as raw:
        stored_x = raw.lb.items.find_one({"g": "w"})["x"]
        assert not isinstance(stored_x, int), "the set holds the envelope, not the value"
    proxies[0].start()  # its start records a line its death cut short, if it left one
    for p in proxies:
        p.stop()
    r = subprocess.run(["java", "-jar", str(JAR), "audit", "verify", "--config", str(proxies[1].config),
                        *[str(f) for p in proxies for f in p.trail_files()]], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    verdicts = r.stdout.splitlines()
    assert [v.split(" (instance ")[1].split(")")[0] for v in verdicts] == [p.name for p in proxies], verdicts
    assert all(v.startswith("ok ") for v in verdicts), verdicts
    inserts = set()
    for p in proxies:
        for f in p.trail_files():
            for line in f.read_text().splitlines():
                if line.endswith("}") and '"cmd":"insert"' in line:
                    entry = json.loads(line)
                    assert entry["instance"] == p.name
                    if entry["code"] == 0:
                        inserts.add((p.name, entry["seq"]))
    assert len(inserts) >= len(acked), f"{len(inserts)} insert lines for {len(acked)} acknowledged writes"
    print(f"\n{verdicts}")
    print(f"\n{done[0]} operations, {len(acked)} acknowledged writes, retried by the set {rs.writes.retried}, "
          f"cursors complete {cursors['complete']} ({cursors['after_kill']} after the kill), failed {len(cursors['failed'])}")
    app.close()
