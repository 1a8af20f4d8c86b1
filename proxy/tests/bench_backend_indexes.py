"""The embedded backend's index use, timed against a given jar (the launcher's indexes, or an
older build's to compare): on 100,000 documents, a scan `_id >= k` sorted with a limit of 50 (YCSB
workload E's), an update by `_id` with a condition on another field (rewrap's and the proxy's
compare-and-swap shape) and an equality on a field with a secondary index (1,000 documents each).
Not a test (pytest does not collect it by name):
`.venv/bin/python proxy/tests/bench_backend_indexes.py [path/to/fle-proxy.jar]`.
Figures in docs/benchmarks.md ("What bounds rewrap")."""
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

from pymongo import MongoClient

DOCS = 100_000
REPEATS = 50


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connected(port):
    for _ in range(100):
        try:
            c = MongoClient(f"mongodb://127.0.0.1:{port}", serverSelectionTimeoutMS=500)
            c.admin.command("ping")
            return c
        except Exception:
            time.sleep(0.2)
    raise RuntimeError("the backend did not start")


def timed(label, operation):
    t0 = time.perf_counter()
    for _ in range(REPEATS):
        operation()
    print(f"{label}: {(time.perf_counter() - t0) / REPEATS * 1000:.2f} ms each ({REPEATS})")


def main():
    jar = sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parents[2] / "proxy" / "target" / "fle-proxy.jar")
    port = free_port()
    backend = subprocess.Popen(["java", "-Xmx4g", "-jar", jar, "backend", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        coll = connected(port).t.u
        for start in range(0, DOCS, 5000):
            coll.insert_many([{"_id": "user%07d" % i, "f": i, "tag": i % 100} for i in range(start, start + 5000)])
        coll.create_index("tag")
        r = random.Random(1)

        def update():
            i = r.randrange(DOCS)
            coll.update_one({"_id": "user%07d" % i, "f": {"$eq": i}}, {"$set": {"g": 1}})

        timed("scan _id >= k sorted, limit 50",
              lambda: list(coll.find({"_id": {"$gte": "user%07d" % r.randrange(DOCS)}}).sort("_id", 1).limit(50)))
        timed("update {_id: X, f: {$eq: v}}", update)
        timed("find {tag: t} (a secondary index)", lambda: list(coll.find({"tag": r.randrange(100)})))
    finally:
        backend.kill()


if __name__ == "__main__":
    main()
