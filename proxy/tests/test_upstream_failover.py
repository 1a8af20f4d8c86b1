"""Upstreams that fail over (issue 30), on the real proxy with pymongo as applications use it
(retryable writes on, its defaults), against stand-ins (replset_server.py) in front of the
embedded backend, which holds the data:

- a replica set that elects a new primary while four threads write: the proxy follows the
  primary, closes the connections bound to the old one, and no write fails (each retried once
  at most, as drivers do) or is applied twice;
- three mongos of one cluster, one killed while four threads write: new connections go to the
  others, and no write fails or is applied twice.
"""
import json
import time
import urllib.request

import pytest

from conftest import ProxyProcess, Threads, client, free_port, wait_until
from replset_server import Mongos, ReplicaSet, RetryableWrites


class Writers(Threads):
    """Threads inserting documents of their own through the proxy, every outcome kept."""

    def __init__(self, coll, n=4):
        self.coll = coll
        self.acked, self.errors = [], []
        super().__init__(n, join_timeout=60)

    def run(self, i):
        k = 0
        while not self.stop.is_set():
            _id = f"w{i}-{k}"
            k += 1
            try:
                self.coll.insert_one({"_id": _id, "v": k})
                with self.lock:
                    self.acked.append(_id)
            except Exception as e:  # any failure counts
                with self.lock:
                    self.errors.append(f"{_id}: {e!r}")
            time.sleep(0.002)

    def more_acked(self, n, timeout=60):
        """Waits until n more writes than now are acknowledged (events, not a fixed time: on a
        busy machine the writers are slower, so a fixed sleep would test less)."""
        with self.lock:
            target = len(self.acked) + n
        wait_until(lambda: len(self.acked) >= target or self.errors, timeout,
                   f"{n} more acknowledged writes ({target - n} when the wait began)")


def stored_ids(backend_port, coll_name):
    with client(f"mongodb://127.0.0.1:{backend_port}") as raw:
        return [d["_id"] for d in raw.failover[coll_name].find({}, {"_id": 1})]


def test_no_write_fails_across_an_election_of_the_replica_set(workdir, backend):
    rs = ReplicaSet(backend.port)
    admin = free_port()
    proxy = ProxyProcess(workdir, backend.port, name="proxy-rs", upstream=rs.uri(), extra=f"admin: 127.0.0.1:{admin}\n")
    proxy.start()
    try:
        with client(proxy.uri(), serverSelectionTimeoutMS=30_000) as c:
            coll = c.failover.rs
            assert c.admin.command("hello").get("msg") == "isdbgrid", "in front of a set the proxy is a router"
            with Writers(coll) as w:
                w.more_acked(50)
                proxy.mark_log()
                rs.elect(1, gap=1.0)
                w.more_acked(50)      # writes go on after the first election
                rs.elect(2, gap=0.5)
                w.more_acked(50)      # and after the second
            assert len(w.acked) >= 150 and not w.errors, (len(w.acked), w.errors[:5])
        print(f"rs: {len(w.acked)} writes, {rs.writes.retried} retried after being applied")
        ids = stored_ids(backend.port, "rs")
        assert len(ids) == len(set(ids)) and set(w.acked) <= set(ids)
        hosts = rs.hosts()
        log = proxy.log_text()
        assert f"primary {hosts[1]} (was {hosts[0]})" in log or f"primary none (was {hosts[0]})" in log, log[-3000:]
        assert f"primary {hosts[2]}" in log and "client connection(s) bound to" in log, log[-3000:]
        # after the elections, writes reach the new primary only
        before = len(rs.members[2].commands())
        with client(proxy.uri()) as c:
            c.failover.rs.insert_one({"_id": "after"})
        assert len(rs.members[2].commands()) > before
        ready = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{admin}/readyz", timeout=10).read())
        assert ready["ready"] and f"{hosts[2]}: primary" in ready["upstreams"], ready
        assert f"{hosts[0]}: secondary" in ready["upstreams"], ready
    finally:
        proxy.stop()
        rs.close()


def test_no_write_fails_when_one_of_several_mongos_is_killed(workdir, backend):
    writes = RetryableWrites()
    mongos = [Mongos(backend.port, writes) for _ in range(3)]
    # one by name: the proxy looks it up off its event loops (UpstreamResolver)
    upstream = ",".join(f"{'localhost' if i == 1 else '127.0.0.1'}:{m.port}" for i, m in enumerate(mongos))
    proxy = ProxyProcess(workdir, backend.port, name="proxy-mongos", upstream=upstream).start()
    try:
        with client(proxy.uri(), serverSelectionTimeoutMS=30_000) as c:
            with Writers(c.failover.mongos) as w:
                w.more_acked(50)
                # each mongos holds connections (some carry only a driver's heartbeats, so count
                # connections: a client socket and a backend socket each)
                held = lambda: [len(m.open) // 2 for m in mongos]  # noqa: E731
                wait_until(lambda: all(n > 0 for n in held()), 30, "connections on every mongos")
                mongos[0].kill()
                w.more_acked(100)     # writes go on without it
            assert len(w.acked) >= 150 and not w.errors, (len(w.acked), w.errors[:5])
        print(f"mongos: {len(w.acked)} writes, {writes.retried} retried after being applied")
        ids = stored_ids(backend.port, "mongos")
        assert len(ids) == len(set(ids)) and set(w.acked) <= set(ids)
        # new connections go to the living ones, in turn
        after = [len(m.commands()) for m in mongos[1:]]
        for _ in range(6):
            with client(proxy.uri()) as c:
                c.failover.mongos.insert_one({})
        assert all(len(m.commands()) > n for m, n in zip(mongos[1:], after))
    finally:
        proxy.stop()
        for m in mongos:
            m.kill()


@pytest.mark.parametrize("upstream, error", [
    ("mongodb://a:1,b:2/", "several hosts in a mongodb:// string need ?replicaSet=NAME"),
    ("mongodb://u:p@a:1/?replicaSet=rs0", "no credentials here"),
    ("mongodb://a:1/?replicaSet=rs0&w=majority", "option w is not one the proxy reads"),
    ("a:1,a:1", "lists a:1 twice"),
    ("mongodb+srv://cluster.example.com/", "mongodb+srv:// needs SRV and TXT lookups"),
])
def test_an_upstream_the_proxy_cannot_follow_is_refused_at_start(workdir, upstream, error):
    import subprocess
    from conftest import JAR
    config = workdir / "bad-upstream.yaml"
    config.write_text(f'listen: 127.0.0.1:{free_port()}\nupstream: "{upstream}"\n')
    r = subprocess.run(["java", "-jar", str(JAR), "proxy", "--config", str(config)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and error in r.stdout + r.stderr, r.stdout + r.stderr


def test_without_a_primary_a_new_connection_waits_then_is_told_why(workdir, backend):
    rs = ReplicaSet(backend.port)
    rs.primary = None  # an election that does not end
    proxy = ProxyProcess(workdir, backend.port, name="proxy-noprimary",
                         upstream=rs.uri() + "&serverSelectionTimeoutMS=1500").start()
    try:
        with client(proxy.uri(), serverSelectionTimeoutMS=20_000) as c:
            t0 = time.monotonic()
            with pytest.raises(Exception) as e:
                c.admin.command("ping")
            waited = time.monotonic() - t0
        assert "replica set rs0 has no primary (waited 1500 ms)" in str(e.value), str(e.value)
        assert "secondary" in str(e.value) and waited >= 1.4, (waited, str(e.value))
        # once one is elected, new connections go to it
        rs.elect(2, gap=0)
        with client(proxy.uri(), serverSelectionTimeoutMS=20_000) as c:
            c.failover.noprimary.insert_one({"_id": 1})
        assert any(name == "insert" for name, _, _ in rs.members[2].commands())
    finally:
        proxy.stop()
        rs.close()
