"""What a query the proxy evaluates costs per examined candidate: the proxy's CPU (utime+stime from
/proc/PID/stat around each phase) per candidate, and wall time per query, for 100, 1,000 and
10,000 candidates, against the same candidates decrypted and returned without evaluation (a filter
on the plain field alone). Rounds alternate the two and the first is warm-up; figures are medians
with min–max. `make bench-overhead` runs it against its AES-GCM proxy on epoll and appends the
section to overhead.md; `make bench-evaluated` runs it against a proxy of its own.

    python -m deploy.bench.evaluated_cost --uri URI --pid PID --collection DB.COLL --append overhead.md
"""
from __future__ import annotations

import argparse
import sys
import time

from . import markdown, stats
from .procstat import cpu_seconds

SIZES = (100, 1_000, 10_000)
# The collection's encrypted field is `x`; `n` is plain and selects the candidates.
EVALUATED = "evaluated"
DECRYPTED = "decrypted only"


def load(collection, documents: int = max(SIZES)) -> None:
    """documents {_id, n, x, pad} with n == x == _id, x encrypted."""
    collection.drop()
    collection.insert_many([{"_id": i, "n": i, "x": i, "pad": "p" * 100} for i in range(documents)])


def measure(collection, pid: int, sizes=SIZES, rounds: int = 5, candidates_per_phase: int = 200_000) -> list[dict]:
    """Per size, the spreads of µs of proxy CPU per candidate and of ms per query, both modes."""
    rows = []
    for k in sizes:
        queries = max(3, candidates_per_phase // k)
        cpu = {EVALUATED: [], DECRYPTED: []}
        wall = {EVALUATED: [], DECRYPTED: []}
        for r in range(rounds + 1):  # round 0: warm-up
            for mode in ((EVALUATED, DECRYPTED) if r % 2 == 0 else (DECRYPTED, EVALUATED)):
                # x >= 0 holds for every candidate: the proxy examines all k, the answers are alike
                flt = {"n": {"$lt": k}, "x": {"$gte": 0}} if mode == EVALUATED else {"n": {"$lt": k}}
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                for _ in range(queries):
                    got = sum(1 for _ in collection.find(flt, batch_size=k + 1))
                    if got != k:
                        raise RuntimeError(f"{mode} query over {k} candidates returned {got} documents")
                t1, c1 = time.perf_counter(), cpu_seconds(pid)
                if r > 0:
                    cpu[mode].append((c1 - c0) * 1e6 / (queries * k))
                    wall[mode].append((t1 - t0) * 1e3 / queries)
        rows.append({"candidates": k, "queries": queries,
                     "cpu": {m: stats.spread(v) for m, v in cpu.items()},
                     "wall": {m: stats.spread(v) for m, v in wall.items()},
                     "ratio": stats.spread([e / d for e, d in zip(cpu[EVALUATED], cpu[DECRYPTED]) if d > 0]),
                     "added_ms": stats.spread([e - d for e, d in zip(wall[EVALUATED], wall[DECRYPTED])])})
    return rows


def section(rows: list[dict], rounds: int, command: str) -> list[str]:
    """The Markdown section: one row per candidate count."""
    body = [[f"{r['candidates']:,}",
             markdown.median_range(r["cpu"][EVALUATED], "{:.2f}"),
             markdown.median_range(r["cpu"][DECRYPTED], "{:.2f}"),
             markdown.median_range(r["ratio"], "{:.2f}"),
             markdown.median_range(r["wall"][EVALUATED], "{:.1f}"),
             markdown.median_range(r["added_ms"], "{:+.1f}")] for r in rows]
    return ["## What a query the proxy evaluates costs", "",
            "A `find` whose filter holds a range on the encrypted `x` (`{n: {$lt: K}, x: {$gte: 0}}`): the "
            "server returns the K candidates its part selects, the proxy decrypts them and evaluates the range "
            "on each. Against the same K candidates decrypted and returned without evaluation "
            "(`{n: {$lt: K}}`), in the same rounds, alternating; "
            f"{rounds} measured rounds after one of warm-up; medians (min–max). CPU is the proxy's "
            "(utime+stime from /proc); latency is the client's, per query, including its own decoding.", "",
            *markdown.table(["candidates", "µs proxy CPU per candidate, evaluated",
                             "µs per candidate, decrypted only", "ratio (per round)", "ms per query, evaluated",
                             "added ms per query"], body, "rrrrrr"),
            f"Command: `{command}`.", ""]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", required=True)
    p.add_argument("--pid", type=int, required=True, help="the proxy's process")
    p.add_argument("--collection", required=True, help="DB.COLL, encrypting x")
    p.add_argument("--append", required=True, help="the Markdown report to append the section to")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--candidates-per-phase", type=int, default=200_000)
    p.add_argument("--command", default="make bench-overhead")
    args = p.parse_args(argv)
    from pymongo import MongoClient
    db, coll = args.collection.split(".", 1)
    client = MongoClient(args.uri)
    try:
        collection = client[db][coll]
        load(collection)
        rows = measure(collection, args.pid, rounds=args.rounds, candidates_per_phase=args.candidates_per_phase)
        collection.drop()
    finally:
        client.close()
    with open(args.append, "a", encoding="utf-8") as f:
        f.write("\n" + "\n".join(section(rows, args.rounds, args.command)))
    for r in rows:
        print(f"evaluated cost: {r['candidates']} candidates: {r['cpu'][EVALUATED]['median']:.2f} µs/candidate "
              f"evaluated, {r['cpu'][DECRYPTED]['median']:.2f} decrypted only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
