"""What a query the proxy evaluates costs per examined candidate: proxy CPU (utime+stime from
/proc/PID/stat around each phase) per candidate and wall time per query, for 100, 1,000 and 10,000
candidates, against the same candidates decrypted and returned without evaluation (a filter on the
plain field alone). Rounds alternate the two, the first round is warm-up; medians with min-max.

Not a test (pytest does not collect it by name): `make bench-evaluated`."""
import os
import statistics
import time

from conftest import EncryptingProxy, client

def cpu_ms(pid):
    """utime + stime of the process, in ms."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")

def test_evaluated_query_cost(workdir, backend, kms):
    key = kms.keys["AES-256"]
    p = EncryptingProxy(workdir, backend.port, kms, f"  b.c: {{ key: {key}, fields: {{ x: {{}}, pad: {{}} }} }}\n", name="pb").start()
    c = client(p.uri()).b.c
    c.drop()
    c.insert_many([{"_id": i, "n": i, "x": i, "pad": "p" * 100} for i in range(10_000)])
    pid = p.proc.pid
    rows = []
    for k in (100, 1000, 10_000):
        reps = max(3, 300_000 // k)
        res = {"eval": [], "plain": []}
        lat = {"eval": [], "plain": []}
        for rnd in range(6):
            for mode in (("eval", "plain") if rnd % 2 == 0 else ("plain", "eval")):
                q = {"n": {"$lt": k}, "x": {"$gte": 0}} if mode == "eval" else {"n": {"$lt": k}}
                c0 = cpu_ms(pid); t0 = time.perf_counter()
                for _ in range(reps):
                    got = list(c.find(q, batch_size=20_000))
                    assert len(got) == k
                t1 = time.perf_counter(); c1 = cpu_ms(pid)
                if rnd > 0:
                    res[mode].append((c1 - c0) * 1000 / (reps * k))
                    lat[mode].append((t1 - t0) * 1000 / reps)
        rows.append((k, statistics.median(res["eval"]), min(res["eval"]), max(res["eval"]),
                     statistics.median(res["plain"]), min(res["plain"]), max(res["plain"]),
                     statistics.median(lat["eval"]), statistics.median(lat["plain"])))
    p.stop()
    print("\ncandidates | eval cpu us/cand (min-max) | plain cpu us/cand (min-max) | eval ms/query | plain ms/query")
    for r in rows:
        print(f"{r[0]} | {r[1]:.2f} ({r[2]:.2f}-{r[3]:.2f}) | {r[4]:.2f} ({r[5]:.2f}-{r[6]:.2f}) | {r[7]:.1f} | {r[8]:.1f}")
