"""How the proxy's cost grows with one dimension at a time (deploy/bench/scale.py), against
proxies of its own on the session's backend and KMS: one with the policy of listed paths and
AES-GCM (and `scale.plain` outside it), and a fresh one without policy for the memory after a
burst; writes results/embedded/scale.md.

Not a test (pytest does not collect it by name): `make bench-scale`."""
import os
import sys
import time
from datetime import date
from pathlib import Path

from conftest import EncryptingProxy, ProxyProcess, client

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from deploy.bench import markdown, scale  # noqa: E402


def test_scale(workdir, backend, kms):
    rounds = int(os.environ.get("SCALE_ROUNDS", "3"))
    p = EncryptingProxy(workdir, backend.port, kms, scale.policy_yaml(kms.keys["AES-256"]), name="p-scale").start()
    c = client(p.uri(), socketTimeoutMS=600_000)
    try:
        only = os.environ.get("SCALE_ONLY", "paths,sizes,batches,burst").split(",")  # for a look at one dimension
        paths = scale.measure_paths(c.scale, p.proc.pid, rounds) if "paths" in only else []
        sizes = scale.measure_sizes(c.scale, {"plain": p.proc.pid, "aes": p.proc.pid}, rounds) if "sizes" in only else {}
        batches = scale.measure_batches(c.scale, p.proc.pid, rounds) if "batches" in only else None
    finally:
        c.close()
        p.stop()
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
    lines = scale.report(paths, sizes, rounds, f"make bench-scale (SCALE_ROUNDS={rounds})", note, burst, batches)
    if only == ["paths", "sizes", "batches", "burst"]:
        markdown.write(ROOT / "results" / "embedded" / "scale.md", lines)
    print("\n" + "\n".join(lines))
