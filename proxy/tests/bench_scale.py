"""How the proxy's cost grows with one dimension at a time (deploy/bench/scale.py), against
proxies of its own on the session's backend and KMS: one with the policy of listed paths and
AES-GCM (and `scale.plain` outside it), and a fresh one without policy for the memory after a
burst; and the byte relay of fle-bench.jar, the floor of the message sizes; writes
results/embedded/scale.md.

Not a test (pytest does not collect it by name): `make bench-scale`."""
import os
import sys
import time
from datetime import date
from pathlib import Path

from conftest import JAR, BenchRelay, EncryptingProxy, ProxyProcess, client

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from deploy.bench import markdown, scale  # noqa: E402


REWRAP_NOTE = ("What bounds rewrap here (docs/benchmarks.md, \"What bounds rewrap\"): a run's start (the KMS's keys "
               "over mutual TLS, the connection, code not yet compiled) is most of a 1,000-document run; past it, the "
               "backend's conditional updates, which cost it several times what its inserts do (the last two "
               "columns), and for 3DES opening 3DES itself (Bouncy Castle's DESede, about 60 % of rewrap's CPU by JFR): "
               "rewrap, the backend and the proxy share two cores. The backend finds each updated document by its _id "
               "index (the launcher's, docs/architecture.md#the-embedded-backend).")


def _measure_sizes(workdir, backend, db, proxy_pid, rounds):
    """The message sizes through the proxy and, in the same rounds, through a byte relay (the floor),
    started for them only: its JVM idles through the other dimensions otherwise."""
    relay = BenchRelay(workdir, backend.port).start()
    rc = client(relay.uri(), socketTimeoutMS=600_000)
    try:
        series = {"plain": (db.plain, proxy_pid), "aes": (db.aes, proxy_pid),
                  scale.RELAY: (rc.scale.relayed, relay.proc.pid)}
        return scale.measure_sizes(series, rounds)
    finally:
        rc.close()
        relay.stop()


def test_scale(workdir, backend, kms):
    rounds = int(os.environ.get("SCALE_ROUNDS", "3"))
    aes = kms.keys["AES-256"]
    old_keys = {name: kms.keys[src] for src, name in scale.REWRAP_SOURCES.items()}
    p = EncryptingProxy(workdir, backend.port, kms, scale.policy_yaml(aes, old_keys=old_keys), name="p-scale").start()
    c = client(p.uri(), socketTimeoutMS=600_000)
    everything = ["paths", "sizes", "batches", "burst", "rewrap", "held"]
    only = os.environ.get("SCALE_ONLY", ",".join(everything)).split(",")  # for a look at one dimension
    rewrap = None
    try:
        if "rewrap" in only:  # first: its documents are the only ones in the backend then
            config = workdir / "rewrap-scale.yaml"
            config.write_text(scale.rewrap_yaml(p.config.read_text(), aes, old_keys))
            rewrap = scale.measure_rewrap(c.scale, JAR, config, rounds, backend_pid=backend.proc.pid)
        held = {}
        if "held" in only:
            held["connections"] = scale.measure_connections(c.scale.aes, p.port, p.proc.pid, rounds)
            held["cursors"] = scale.measure_cursors(c.scale.aes, p.proc.pid, rounds)
        scale.collect(p.proc.pid)
        paths = scale.measure_paths(c.scale, p.proc.pid, rounds) if "paths" in only else []
        scale.collect(p.proc.pid)
        sizes = _measure_sizes(workdir, backend, c.scale, p.proc.pid, rounds) if "sizes" in only else {}
        scale.collect(p.proc.pid)
        batches = scale.measure_batches(c.scale, p.proc.pid, rounds) if "batches" in only else None
    finally:
        c.close()
        p.stop()
    if "held" in only:
        def start_proxy(collections):
            q = EncryptingProxy(workdir, backend.port, kms, scale.policy_size_yaml(aes, collections),
                                name=f"p-policy{collections}").start()
            qc = client(q.uri(), socketTimeoutMS=600_000)
            return qc.scale.aes, q.proc.pid, lambda: (qc.close(), q.stop())
        held["policy size"] = scale.measure_policy_size(start_proxy, rounds)
    burst = None
    if "burst" in only:  # a fresh proxy without policy: its memory before is its own at rest
        fresh = ProxyProcess(workdir, backend.port, name="p-burst").start()
        try:
            time.sleep(3)
            burst = scale.measure_burst(fresh.port, fresh.proc.pid)
        finally:
            fresh.stop()
    note = (f"One proxy process (`scale.plain` is outside its policy), the embedded backend, the KMS and the "
            f"Python client (pymongo) on one {os.cpu_count()}-core machine, {date.today().isoformat()}.")
    lines = scale.report(paths, sizes, rounds, f"make bench-scale (SCALE_ROUNDS={rounds})", note, burst, batches,
                         rewrap, REWRAP_NOTE, held)
    if only == everything:
        markdown.write(ROOT / "results" / "embedded" / "scale.md", lines)
    print("\n" + "\n".join(lines))
