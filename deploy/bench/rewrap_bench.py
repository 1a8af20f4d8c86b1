"""What a key change costs on a live system: `make bench-rewrap` (DEMO_JOB=rewrap deploy/demo.sh).

Through the proxy, 2 x REPEATS collections of RECORDS YCSB documents are loaded under the old key
(3DES) and one more, the application's, under the new key (AES); the policy then moves the first
ones to the new key with the old one under previousKeys, and:
- alone: `rewrap` moves REPEATS of them one after another with nothing else running;
- under load: a YCSB workload A (8 threads, reads and updates by _id) starts on the application's
  collection, runs RAMP seconds unmeasured (the JIT of YCSB's JVM and of the proxy's paths for it),
  then windows of SECONDS without rewrap alternate with `rewrap` moving the other REPEATS
  collections: without, during, without, during, ..., without.
Figures: rewrap's documents per second in both cases; the workload's throughput, and the proxy's
and the backend's CPU per operation of it, without and during; per repeat, "kept" is during
divided by the mean of the two windows around it (one YCSB process throughout, so the windows
share its JIT state and the machine's drifts fall on both sides).
The load works on a collection of its own so that rewrap has the same work in both cases (on the
collection being moved, workload A's own updates re-encrypt most fields before rewrap reaches
them); that rewrap and an application share a collection safely is what the integration test
(proxy/tests/test_rewrap.py) checks. At the end `rewrap --dry-run` on every moved collection
must find 0 to rewrite. Writes rewrap.md and rewrap.csv to --out.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time

from . import markdown, stats
from .procstat import cpu_seconds

# + _N per repeat: moved alone, moved under load, the application's (the load's) collection
ALONE, LIVE, APP = "rewrap_alone", "rewrap_live", "rewrap_app"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--proxy-port", type=int, required=True)
    p.add_argument("--proxy-pid", type=int, required=True)
    p.add_argument("--backend-pid", type=int, required=True)
    p.add_argument("--config", required=True, help="the proxy's YAML; its collections: block is last")
    p.add_argument("--proxy-log", required=True)
    p.add_argument("--old-key", required=True)
    p.add_argument("--new-key", required=True)
    p.add_argument("--records", type=int, default=5000)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--ramp", type=float, default=60, help="unmeasured seconds of the workload before its first window")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--jar", default="proxy/target/fle-proxy.jar")
    p.add_argument("--ycsb-jar", default="ycsb-workloads/binding/target/fle-ycsb.jar")
    p.add_argument("--workload", default="ycsb-workloads/workloads/workloada")
    p.add_argument("--java", default=os.environ.get("JAVA", "java"))
    p.add_argument("--out", required=True)
    p.add_argument("--command", default="make bench-rewrap")
    return p.parse_args(argv)


class Policy:
    """Writes the benchmark's collections at the end of the proxy's YAML and waits for the reload.
    A reload never drops a key (it would lower what can be read), so a collection cannot go back
    to 3DES: each repeat has collections of its own, and earlier repeats' lines stay."""

    def __init__(self, args):
        self.args = args
        with open(args.config) as f:
            self.base = [line for line in f.read().splitlines() if not any(t in line for t in (ALONE, LIVE, APP))]
        self.lines = {}

    def set(self, tables, key: str, previous: str | None = None) -> None:
        prev = f", previousKeys: [{previous}]" if previous else ""
        for t in tables:
            self.lines[t] = f'  ycsb.{t}: {{ key: {key}{prev}, fields: "*" }}'
        with open(self.args.config, "w") as f:
            f.write("\n".join(self.base + list(self.lines.values())) + "\n")
        before = self.reloads()
        os.kill(self.args.proxy_pid, signal.SIGHUP)
        deadline = time.monotonic() + 30
        while self.reloads() == before:
            if time.monotonic() > deadline:
                sys.exit(f"rewrap bench: the proxy did not reload its policy; see {self.args.proxy_log}")
            time.sleep(0.1)

    def reloads(self) -> int:
        with open(self.args.proxy_log, errors="replace") as f:
            return f.read().count("policy reloaded")


def ycsb(args, phase: str, table: str, extra=()) -> list[str]:
    return [args.java, "-cp", args.ycsb_jar, "site.ycsb.Client", phase, "-db", "dev.fleproxy.ycsb.MongoDbClient",
            "-P", args.workload, "-p", f"recordcount={args.records}", "-p", f"table={table}",
            "-p", f"mongodb.url=mongodb://127.0.0.1:{args.proxy_port}/ycsb", "-p", "mongodb.batchsize=100",
            "-threads", str(args.threads), *extra]


def rewrap(args, table: str, *extra) -> dict:
    """Runs `rewrap` on ycsb.TABLE: its documents and seconds as it reports them (the run, without
    the JVM's start), and the CPU seconds of its process (start included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run([args.java, "-jar", args.jar, "rewrap", "--config", args.config, "--collection",
                        f"ycsb.{table}", *extra], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"([\d,]+) documents examined, ([\d,]+) (?:would be )?rewritten in ([\d.]+) s", r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f"rewrap bench: rewrap ycsb.{table} {' '.join(extra)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    print("  " + r.stdout.strip().replace("\n", "\n  "), flush=True)
    return {"examined": int(m.group(1).replace(",", "")), "rewritten": int(m.group(2).replace(",", "")),
            "seconds": float(m.group(3)), "wall": wall, "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}


class Workload:
    """A YCSB run in the background; its status lines (one a second) stamped as they arrive, so the
    operations between two moments can be read off."""

    PROGRESS = re.compile(r" (\d+) operations;")

    def __init__(self, args, table: str):
        self.marks = [(time.monotonic(), 0)]
        # operationcount=0 runs nothing in YCSB 0.17: a count no run reaches, and a time limit
        self.proc = subprocess.Popen(ycsb(args, "-t", table, ["-p", "operationcount=1000000000", "-p",
                                     "maxexecutiontime=3600", "-s", "-p", "status.interval=1"]),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.proc.stderr:
            m = self.PROGRESS.search(line)
            if m and " sec: " in line:
                self.marks.append((time.monotonic(), int(m.group(1))))

    def ops_at(self, t: float) -> tuple[float, int]:
        """The last status line at or before t: (its time, operations so far)."""
        return max((m for m in self.marks if m[0] <= t), key=lambda m: m[0])

    def window(self, t0: float, t1: float) -> tuple[float, int]:
        a, b = self.ops_at(t0), self.ops_at(t1)
        return b[0] - a[0], b[1] - a[1]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def measure_window(work: Workload, pids: dict, action) -> dict:
    """Runs action() (or sleeps, if it is a number) and reads the workload's operations and each
    process's CPU over it; the window's edges are status lines' times, read a second after."""
    cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
    t0 = time.monotonic()
    result = time.sleep(action) if isinstance(action, (int, float)) else action()
    t1 = time.monotonic()
    cpu1 = {k: cpu_seconds(p) for k, p in pids.items()}
    time.sleep(1.2)  # the status line after t1
    seconds, ops = work.window(t0, t1)
    row = {"ops_per_s": ops / seconds if seconds > 0 else float("nan"), "window_s": t1 - t0}
    for k in pids:
        row[f"{k}_cpu_ms_per_1000_ops"] = (cpu1[k] - cpu0[k]) * 1e6 / ops if ops else float("nan")
    return row, result


def prepare(args, policy: Policy) -> tuple[list[str], list[str], str]:
    """Loads every collection and moves the policy on; the tables moved alone, under load, and the app's."""
    alone = [f"{ALONE}_{r}" for r in range(1, args.repeats + 1)]
    live = [f"{LIVE}_{r}" for r in range(1, args.repeats + 1)]
    policy.set((APP,), args.new_key)
    policy.set(alone + live, args.old_key)
    for table in [APP] + alone + live:
        r = subprocess.run(ycsb(args, "-load", table), capture_output=True, text=True)
        if r.returncode != 0 or "[OVERALL], Throughput" not in r.stdout:
            sys.exit(f"rewrap bench: YCSB load of ycsb.{table} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    policy.set(alone + live, args.new_key, previous=args.old_key)
    return alone, live, APP


def rewrap_row(repeat: int, run: str, r: dict) -> dict:
    return {"repeat": repeat, "run": run, "window": "rewrap", "docs": r["rewritten"],
            "docs_per_s": r["rewritten"] / r["seconds"], "rewrap_cpu_ms_per_doc": r["cpu"] * 1000 / r["rewritten"]}


def run_all(args, policy: Policy, pids: dict) -> list[dict]:
    alone, live, app = prepare(args, policy)
    rows = []
    for repeat, table in enumerate(alone, 1):
        rows.append(rewrap_row(repeat, "alone", rewrap(args, table)))
    work = Workload(args, app)
    try:
        time.sleep(args.ramp)
        w, _ = measure_window(work, pids, args.seconds)
        rows.append({"repeat": 0, "run": "under load", "window": "workload without", **w})
        for repeat, table in enumerate(live, 1):
            w, r = measure_window(work, pids, lambda: rewrap(args, table))
            rows.append(rewrap_row(repeat, "under load", r))
            rows.append({"repeat": repeat, "run": "under load", "window": "workload during", **w})
            w, _ = measure_window(work, pids, args.seconds)
            rows.append({"repeat": repeat, "run": "under load", "window": "workload without", **w})
    finally:
        work.stop()
    for table in alone + live:
        left = rewrap(args, table, "--dry-run")
        if left["rewritten"] != 0:
            sys.exit(f"rewrap bench: ycsb.{table} still has {left['rewritten']} documents to rewrite after the run")
    return rows


def median_text(values, fmt="{:,.0f}") -> str:
    """'median (min–max)' of the runs or windows that have the figure (NaN: a window without operations)."""
    return markdown.median_range(stats.spread(v for v in values if v == v), fmt, always=True)


def write_report(args, rows: list[dict]) -> None:
    os.makedirs(args.out, exist_ok=True)
    keys = ["repeat", "run", "window", "docs", "docs_per_s", "rewrap_cpu_ms_per_doc", "ops_per_s", "window_s",
            "proxy_cpu_ms_per_1000_ops", "backend_cpu_ms_per_1000_ops"]
    with open(os.path.join(args.out, "rewrap.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{r[k]:.3f}" if isinstance(r.get(k), float) else r.get(k, "")) for k in keys})

    def pick(run, window, key):
        return [r[key] for r in rows if r["run"] == run and r["window"] == window and key in r]

    without = {r["repeat"]: r["ops_per_s"] for r in rows if r["window"] == "workload without"}
    kept = [r["ops_per_s"] / ((without[r["repeat"] - 1] + without[r["repeat"]]) / 2) for r in rows
            if r["window"] == "workload during" and r["repeat"] - 1 in without and r["repeat"] in without]
    lines = [
        "# Re-encrypting a live collection: rewrap's speed and what it takes from the application",
        "",
        f"`{args.command}`: collections of {args.records:,} YCSB documents (10 fields of 100 bytes, every field "
        f"encrypted) moved from 3DES (TDES_CBC_HMAC) to AES-256 (AES_GCM) on the embedded backend by `rewrap`, "
        f"{args.repeats} alone, then {args.repeats} under YCSB workload A ({args.threads} threads, 50 % reads, "
        f"50 % updates by _id, zipfian) on another collection of the same proxy and backend, one YCSB process "
        f"throughout ({args.ramp:g} s unmeasured first), windows of {args.seconds:g} s without rewrap before, "
        f"between and after the runs; KMS, backend, proxy, rewrap and YCSB on one {os.cpu_count()}-core machine, "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}. Medians (min–max) over the runs and windows.",
        "",
    ]
    lines += markdown.table(["", "rewrap documents/s", "rewrap process CPU ms per document (JVM start included)"], [
        [label, median_text(pick(run, "rewrap", "docs_per_s")),
         median_text(pick(run, "rewrap", "rewrap_cpu_ms_per_doc"), "{:.2f}")]
        for label, run in (("alone", "alone"), ("under workload A", "under load"))], align="lrr")
    lines += markdown.table(["workload A", "ops/s", "proxy CPU ms per 1,000 ops", "backend CPU ms per 1,000 ops"], [
        [label, median_text(pick("under load", w, "ops_per_s")),
         median_text(pick("under load", w, "proxy_cpu_ms_per_1000_ops"), "{:.1f}"),
         median_text(pick("under load", w, "backend_cpu_ms_per_1000_ops"), "{:.1f}")]
        for label, w in (("without rewrap", "workload without"), ("while rewrap runs", "workload during"))],
        align="lrrr")
    lines += [
        f"While rewrap ran, the workload kept {median_text([100 * x for x in kept], '{:.0f}')} % of its "
        "throughput without it (per repeat: during ÷ the mean of the windows without, before and after it).",
        "",
        "At the end, `rewrap --dry-run` on every moved collection found 0 documents to rewrite.",
        "",
        "Reading these figures: the embedded backend (mongo-java-server) uses its _id index only for a filter "
        "on _id alone, so each of rewrap's conditional updates (_id plus the old values) scans the collection: "
        "rewrap's rate here falls as the collection grows (`make bench-scale`'s rewrap size), and says more "
        "about the backend than about rewrap; mongod finds the document by its _id index. The workload's "
        "loss during the run is the share of two cores that rewrap, its updates and the backend's scans take; "
        "the backend's CPU per operation of the workload counts the work rewrap gives it too. Documents/s is "
        "what rewrap reports (its run, without the JVM's start of about a second).",
    ]
    markdown.write(os.path.join(args.out, "rewrap.md"), lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    policy = Policy(args)
    pids = {"proxy": args.proxy_pid, "backend": args.backend_pid}
    print(f"rewrap bench: {2 * args.repeats} collections of {args.records:,} documents under the old key, "
          f"{args.repeats} moved alone, then {args.repeats} under YCSB workload A", flush=True)
    rows = run_all(args, policy, pids)
    for r in rows:
        print("  " + ", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()), flush=True)
    write_report(args, rows)
    print(f"rewrap bench: wrote {args.out}/rewrap.md and rewrap.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
