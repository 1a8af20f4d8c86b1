#!/usr/bin/env python3
"""Run a YCSB benchmark matrix: algorithm x record count x workload x repeat, resumable.

Every algorithm has its own collection (ycsb.usertable_aes, ...), so choosing the algorithm is
choosing the collection and so the key the proxy's policy names for it; the proxy is never
restarted. `direct` goes to the database without the proxy, `plain` through the proxy to a
collection without a policy; the others through the proxy to an encrypted collection.

Per record count and repeat, every algorithm runs one session in turn (the order rotates from
repeat to repeat, so drift on a shared machine hits all algorithms alike): one YCSB JVM
(dev.fleproxy.ycsb.Session) loads the algorithm's collection, warms up unrecorded, then measures
each workload's cell back to back; the collection is dropped when the session ends, so while an
algorithm is measured only its data is in the database, as in the paper's one-algorithm cluster
(--keep-data keeps them all). Each finished load and cell appends a line to DIR/ledger.jsonl with
its throughput, latencies, NOT_FOUND and error counts, write concern and the CPU time per
operation of the proxy, the backend and the client where they can be read; a second run with the
same DIR skips what the ledger holds, so an interrupted matrix resumes. At the end the report
(report.md, results.csv, plots/) is written next to the ledger.

--interleave slice (the demo's) measures the algorithms in the same window instead: per record
count and repeat, one session loads every algorithm's collection, then for each workload the
client's threads alternate between the algorithms in slices of --slice-seconds until each has had
its --seconds, so that a ratio's two figures share the machine's drifts (see SlicedCell.java).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import threading

from . import ledger, names, proxy_added, ycsb_output

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_JAR = os.path.join(REPO, "ycsb-workloads", "binding", "target", "fle-ycsb.jar")
DEFAULT_WORKLOADS_DIR = os.path.join(REPO, "ycsb-workloads", "workloads")
BINDING = "dev.fleproxy.ycsb.MongoDbClient"
SESSION = "dev.fleproxy.ycsb.Session"
# Record shape YCSB uses unless a workload file says otherwise.
DEFAULT_SHAPE = {"fieldcount": "10", "fieldlength": "100"}
# CoreWorkload's proportions when a workload file does not set them.
DEFAULT_PROPORTIONS = {"readproportion": 0.95, "updateproportion": 0.05, "insertproportion": 0.0,
                       "scanproportion": 0.0, "readmodifywriteproportion": 0.0, "deleteproportion": 0.0}


class MatrixError(Exception):
    """A problem the user can fix; printed as one line, exit status 2 (1 for a failed cell)."""


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except MatrixError as e:
        print(f"matrix: {e}", file=sys.stderr)
        return 2
    except CellFailed as e:
        print(f"matrix: {e}\nmatrix: the ledger keeps every finished cell; run the same command again to resume.",
              file=sys.stderr)
        return 1


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--direct", required=True, help="MongoDB URL of the database itself (mongos); also used to "
                   "drop collections")
    p.add_argument("--proxy", help="MongoDB URL of mongo-fle-proxy (needed for every algorithm but direct)")
    p.add_argument("--database", default="ycsb")
    p.add_argument("--algorithms", default="direct,plain,aes,aria,3des", type=csv,
                   help=f"any of {','.join(names.ALGORITHMS)}")
    p.add_argument("--records", default="1000000,3000000,5000000", type=csv_ints)
    p.add_argument("--workloads", default="a,b,c,d,e,f", type=csv,
                   help="names of files in --workloads-dir: a = workloada, caching = workload_caching, ...")
    p.add_argument("--topology", default="rs3", help="label of the deployment, e.g. rs3, rs6, embedded")
    p.add_argument("--repeats", default=3, type=int)
    p.add_argument("--threads", default=100, type=int)
    p.add_argument("--operations", default=100000, type=int, help="operations per cell (at most, with --seconds)")
    p.add_argument("--seconds", default=0, type=float,
                   help="a cell's measured window ends after this many seconds if --operations are not done "
                        "by then (0: cells end at --operations only)")
    p.add_argument("--operations-for", action="append", default=[], metavar="WORKLOAD=N",
                   help="a different operation count for one workload (repeatable)")
    p.add_argument("--seconds-for", action="append", default=[], metavar="WORKLOAD=S",
                   help="a different --seconds for one workload (repeatable), e.g. e=6 where scans are slow")
    p.add_argument("--warmup-seconds", default=30, type=float, metavar="S",
                   help="per session, after the load: S seconds of the session's first workload, not recorded, "
                        "so that every cell measures a warm proxy and database")
    p.add_argument("--first-warmup-seconds", default=0, type=float, metavar="S",
                   help="before the first session, one unrecorded session per algorithm (load, S seconds shared by "
                        "every workload, drop), so that the first sessions meet neither a cold client (one JVM "
                        "runs every session) nor a cold proxy or database")
    p.add_argument("--load-threads", type=int, help="threads for loading (default: --threads)")
    p.add_argument("--load-batch", default=100, type=int, help="documents per insert while loading")
    p.add_argument("--write-concern", default="w1",
                   help="every write's write concern (binding names: w1 = YCSB's 'acknowledged' and MongoDB "
                        "3.6's default, which the paper ran; majority = MongoDB 8.0's default; default = the "
                        "server's); recorded with every cell")
    p.add_argument("--out", required=True, help="results directory (ledger, report, raw YCSB logs)")
    p.add_argument("--title", help="title of the report")
    p.add_argument("--note", action="append", default=[], help="a line for the report's notes (repeatable)")
    p.add_argument("--interleave", choices=("session", "cell", "slice"), default="session",
                   help="session: per record count and repeat, each algorithm loads once and runs every "
                        "workload; cell: each cell loads its own collection, so algorithms alternate cell by cell "
                        "(pairs measured seconds apart; a load per cell); slice: per record count and repeat every "
                        "algorithm's collection is loaded and each workload's window alternates the algorithms in "
                        "slices of --slice-seconds (pairs measured in the same seconds, for machines whose speed "
                        "drifts; needs --seconds; every algorithm's data is in the database while a cell runs)")
    p.add_argument("--slice-seconds", default=0.25, type=float, metavar="S",
                   help="with --interleave slice: how long one algorithm runs before the next takes over")
    p.add_argument("--keep-data", action="store_true",
                   help="keep every algorithm's collection loaded while the others run (default: load, "
                        "measure, drop: only the measured algorithm's data is in the database)")
    p.add_argument("--cell-timeout", default=3600, type=int,
                   help="seconds per cell (and per load) before a session counts as failed")
    p.add_argument("--max-error-rate", default=0.0, type=float, metavar="F",
                   help="a cell whose operations failed more often than this fraction counts as failed and is "
                        "not recorded (a load may lose no record; a read-only workload may meet no NOT_FOUND)")
    p.add_argument("--proxy-pid", type=int, help="the proxy's process id on this machine: its CPU time per "
                   "operation is recorded for every cell")
    p.add_argument("--backend-pid", type=int, help="the database's process id on this machine (the embedded "
                   "backend), likewise")
    p.add_argument("--proxy-metrics", metavar="URL",
                   help="the proxy's /metrics (its admin: listener, e.g. http://127.0.0.1:9464/metrics): read before "
                        "and after each cell, for what the proxy adds per request (p50/p99) in the ledger and report")
    p.add_argument("--property", action="append", default=[], metavar="KEY=VALUE", dest="properties",
                   help="a YCSB or binding property for every phase, e.g. mongodb.readPreference=primary (repeatable)")
    p.add_argument("--jar", default=DEFAULT_JAR, help="the YCSB runner jar (make build)")
    p.add_argument("--workloads-dir", default=DEFAULT_WORKLOADS_DIR)
    p.add_argument("--java", default=os.environ.get("JAVA", "java"))
    p.add_argument("--no-report", action="store_true", help="only run cells; write no report")
    return p.parse_args(argv)


def csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def csv_ints(text: str) -> list[int]:
    try:
        return [int(t.replace("_", "")) for t in csv(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text}")


# ---------------------------------------------------------------------------------------------
# What the matrix is


def workload_file(name: str, directory: str) -> str:
    for candidate in (f"workload{name}", f"workload_{name}"):
        path = os.path.join(directory, candidate)
        if os.path.isfile(path):
            return path
    available = sorted(f[len("workload"):].lstrip("_") for f in os.listdir(directory) if f.startswith("workload"))
    raise MatrixError(f"unknown workload '{name}': {directory} has {', '.join(available)}")


def workload_properties(path: str) -> dict:
    props = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                props[k.strip()] = v.strip()
    return props


def table_for(workload: str, props: dict) -> str:
    """usertable for YCSB's record shape; workloads with their own record size get their own table."""
    shape = {k: props.get(k, v) for k, v in DEFAULT_SHAPE.items()}
    return "usertable" if shape == DEFAULT_SHAPE else workload


def operations_for(args) -> dict:
    ops = {}
    for item in args.operations_for:
        name, _, n = item.partition("=")
        if not n.isdigit() or int(n) < 1:
            raise MatrixError(f"--operations-for wants WORKLOAD=N with N ≥ 1, not '{item}'")
        ops[name.strip()] = int(n)
    return ops


def seconds_for(args) -> dict:
    seconds = {}
    for item in args.seconds_for:
        name, _, n = item.partition("=")
        try:
            value = float(n)
        except ValueError:
            value = 0
        if value <= 0:
            raise MatrixError(f"--seconds-for wants WORKLOAD=S with S > 0, not '{item}'")
        seconds[name.strip()] = value
    return seconds


def with_database(url: str, database: str) -> str:
    """The URL with its database path set (the binding takes the database from the URL)."""
    base, q, query = url.partition("?")
    scheme, _, rest = base.partition("://")
    hosts = rest.split("/", 1)[0]
    return f"{scheme}://{hosts}/{database}" + (q + query if q else "")


def redact(text: str) -> str:
    """A URL's user:password@ removed, for the screen and the raw logs."""
    return re.sub(r"(mongodb(?:\+srv)?://)[^@/]*@", r"\1", text)


def check_args(args) -> None:
    unknown = [a for a in args.algorithms if a not in names.ALGORITHMS]
    if unknown:
        raise MatrixError(f"unknown algorithm(s) {', '.join(unknown)}; known: {', '.join(names.ALGORITHMS)}")
    if any(a != "direct" for a in args.algorithms) and not args.proxy:
        raise MatrixError("--proxy is needed for every algorithm but direct")
    if args.repeats < 1 or args.threads < 1 or args.operations < 1:
        raise MatrixError("--repeats, --threads and --operations must be at least 1")
    if args.seconds < 0 or args.warmup_seconds < 0:
        raise MatrixError("--seconds and --warmup-seconds cannot be negative")
    if args.interleave == "slice" and (not args.seconds or args.slice_seconds <= 0):
        raise MatrixError("--interleave slice measures time windows: it needs --seconds and a positive --slice-seconds")
    if not 0 <= args.max_error_rate <= 1:
        raise MatrixError("--max-error-rate is a fraction between 0 and 1")
    if not os.path.isfile(args.jar):
        raise MatrixError(f"no YCSB runner jar at {args.jar} (build it with `make build`)")
    args.extra_props = extra_properties(args.properties)
    args.cell_seconds = seconds_for(args)


# Properties the runner sets per phase; --property may not change them.
RUNNER_PROPERTIES = ("recordcount", "operationcount", "table", "mongodb.url", "mongodb.batchsize",
                     "mongodb.writeConcern")


def extra_properties(items: list) -> dict:
    props = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise MatrixError(f"--property wants KEY=VALUE, not '{item}'")
        if key in RUNNER_PROPERTIES:
            raise MatrixError(f"--property {key}: the runner sets it per phase ({', '.join(RUNNER_PROPERTIES)}; "
                              "the write concern is --write-concern)")
        props[key] = value.strip()
    return props


def check_reachable(args) -> None:
    import pymongo  # here, so --help works without the venv
    urls = {"the database (--direct)": args.direct}
    if args.proxy and any(a != "direct" for a in args.algorithms):
        urls["the proxy (--proxy)"] = args.proxy
    for what, url in urls.items():
        client = pymongo.MongoClient(url, serverSelectionTimeoutMS=5000, connectTimeoutMS=5000)
        try:
            client.admin.command("ping")
        except Exception as e:  # noqa: BLE001 - any failure means: not usable
            raise MatrixError(f"cannot reach {what} at {redact(url)}: {redact(str(e).splitlines()[0][:200])}")
        finally:
            client.close()



def read_only(props: dict) -> bool:
    """A workload that only reads (C): any NOT_FOUND means a key it expected is missing."""
    share = {k: float(props.get(k, v)) for k, v in DEFAULT_PROPORTIONS.items()}
    return all(share[k] == 0 for k in ("updateproportion", "insertproportion", "readmodifywriteproportion",
                                       "deleteproportion"))


# ---------------------------------------------------------------------------------------------
# Checking what a phase did


class CellFailed(Exception):
    """A YCSB phase failed; the message says which and where its output is."""


def check_phase(result: dict, what: str, max_rate: float, log_path: str, read_only_workload=False) -> None:
    """A phase that did nothing, failed more operations than the budget allows, or (read-only)
    missed a key is a failed cell, not a figure: YCSB counts such operations as done."""
    ops = result["ops"]
    errors = sum(o["errors"] for o in ops.values())
    not_found = sum(o.get("not_found", 0) for o in ops.values())
    # YCSB's count is of operations that returned OK; the failed and the missed are counted apart
    total = sum(o["count"] for o in ops.values()) + errors + not_found
    if total == 0:
        raise CellFailed(f"{what} did no operation (its client threads failed to start); see {log_path}")
    if errors and errors > max_rate * total:
        budget = "none may fail" if max_rate == 0 else f"more than {max_rate:.2%}"
        raise CellFailed(f"{what}: {errors} of {total} operations failed ({budget}; --max-error-rate); "
                         f"see {log_path}")
    if read_only_workload and not_found:
        raise CellFailed(f"{what}: {not_found} of {total} reads found no record, in a workload that only reads "
                         f"the records loaded: data is missing; see {log_path}")


def check_load(result: dict, name: str, records: int, log_path: str) -> None:
    """A load may lose no record."""
    check_phase(result, f"loading {name}", 0.0, log_path)
    if result["operations"] != records:
        raise CellFailed(f"loading {name}: {result['operations']} of {records} records inserted; see {log_path}")


def url_for(args, algorithm: str) -> str:
    return with_database(args.direct if algorithm == "direct" else args.proxy, args.database)


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# The matrix


def run(args) -> int:
    check_args(args)
    files = {w: workload_file(w, args.workloads_dir) for w in args.workloads}
    props = {w: workload_properties(files[w]) for w in args.workloads}
    tables = {w: table_for(w, props[w]) for w in args.workloads}
    ops = operations_for(args)
    os.makedirs(args.out, exist_ok=True)
    ledger_path = os.path.join(args.out, "ledger.jsonl")
    write_matrix_json(args, ops)

    done = ledger.done_keys(ledger_path)
    sessions = plan_sessions(args, tables)
    cells = [(s, a, w) for s in sessions for a in session_algorithms(s) for w in s["workloads"]]
    pending = [(s, [w for w in s["workloads"] if any(
        ledger.run_key(args.topology, a, s["records"], w, s["repeat"]) not in done for a in session_algorithms(s))])
        for s in sessions]
    pending = [(s, ws) for s, ws in pending if ws]
    todo = sum(len(ws) * len(session_algorithms(s)) for s, ws in pending)
    print(f"matrix: {len(cells)} cells in {len(sessions)} sessions, {len(cells) - todo} already in {ledger_path}, "
          f"{todo} to run", flush=True)
    if pending:
        check_reachable(args)
        if not args.keep_data:   # an interrupted session leaves its collection behind
            drop(args, sorted({collection(a, t) for a in args.algorithms for t in tables.values()}))
        jvm = ClientJvm(args)
        try:
            if args.first_warmup_seconds:
                first_warmup(args, jvm, sessions, files)
            progress = Progress(todo)
            for session, workloads in pending:
                run_session(args, jvm, session, workloads, files, props, ops, ledger_path, done, progress)
        finally:
            jvm.close()

    if not args.no_report:
        from . import report   # here: matplotlib only when a report is written
        try:
            written = report.write_report(args.out)
        except report.LedgerError as e:
            raise MatrixError(f"no report: {e}")
        print(f"matrix: wrote {', '.join(os.path.relpath(p) for p in written[:3])} and {len(written) - 3} more")
    return 0


def plan_sessions(args, tables: dict) -> list[dict]:
    """Sessions in the order they run: per record count and repeat, each algorithm once (per
    table), the algorithms' order rotated by one from each repeat to the next; with
    --interleave cell, per record count, repeat and workload, each algorithm once (one cell), the
    order rotated from cell to cell; with --interleave slice, per record count, repeat and table,
    one session of every algorithm (key "algorithms", the order rotated from repeat to repeat)."""
    def rotated(shift):
        shift %= len(args.algorithms)
        return args.algorithms[shift:] + args.algorithms[:shift]

    sessions = []
    for records in args.records:
        for rep in range(1, args.repeats + 1):
            if args.interleave == "slice":
                for table in dict.fromkeys(tables[w] for w in args.workloads):
                    sessions.append({"records": records, "repeat": rep, "algorithms": rotated(rep - 1),
                                     "table": table,
                                     "workloads": [w for w in args.workloads if tables[w] == table]})
                continue
            if args.interleave == "cell":
                for i, w in enumerate(args.workloads):
                    for algorithm in rotated(rep - 1 + i):
                        sessions.append({"records": records, "repeat": rep, "algorithm": algorithm,
                                         "table": tables[w], "workloads": [w]})
                continue
            for algorithm in rotated(rep - 1):
                for table in dict.fromkeys(tables[w] for w in args.workloads):
                    sessions.append({"records": records, "repeat": rep, "algorithm": algorithm, "table": table,
                                     "workloads": [w for w in args.workloads if tables[w] == table]})
    return sessions


def session_algorithms(session) -> list[str]:
    return session.get("algorithms") or [session["algorithm"]]


def collection(algorithm: str, table: str) -> str:
    return f"{table}_{algorithm}"


def target(args, algorithm: str, table: str) -> dict:
    """One algorithm of a session: its collection and URL, the processes whose CPU time is its own
    (the idle proxy's is not direct's), and the label the proxy counts its requests under."""
    processes = [k for k, v in (("proxy", args.proxy_pid), ("backend", args.backend_pid))
                 if v and not (k == "proxy" and algorithm == "direct")]
    return {"name": algorithm, "processes": processes,
            "properties": {"table": collection(algorithm, table), "mongodb.url": url_for(args, algorithm)},
            **metrics_label(args, algorithm, table)}


def metrics_url(args) -> dict:
    return {"proxyMetrics": args.proxy_metrics} if args.proxy_metrics else {}


def metrics_label(args, algorithm: str, table: str) -> dict:
    """The `collection` label the proxy counts an algorithm's requests under: its namespace when
    the policy encrypts it, `other` for plain; direct bypasses the proxy and has none."""
    if not args.proxy_metrics or algorithm == "direct":
        return {}
    return {"metricsCollection": "other" if algorithm == "plain"
            else f"{args.database}.{collection(algorithm, table)}"}


def session_plan(args, session, workloads, files, ops) -> dict:
    """What dev.fleproxy.ycsb.Session runs for a session: a load of each algorithm's collection,
    then one cell per workload. With several algorithms (key "algorithms", --interleave slice) each
    is a target, and each cell's warm-up and measured window alternate them in slices; with one
    (key "algorithm") its target is the plan's own, an unrecorded warm-up follows the load, and a
    cell ends after its operations (or its seconds)."""
    targets = [target(args, a, session["table"]) for a in session_algorithms(session)]
    plan = {"db": BINDING, "threads": args.threads,
            "properties": {**args.extra_props, "mongodb.writeConcern": args.write_concern},
            "load": {"workload": files[workloads[0]], "records": session["records"],
                     "threads": args.load_threads or args.threads,
                     "properties": {"mongodb.batchsize": str(args.load_batch)}},
            "cells": [{"name": w, "workload": files[w]} for w in workloads],
            "pids": {k: v for k, v in (("proxy", args.proxy_pid), ("backend", args.backend_pid)) if v},
            "clockTicks": os.sysconf("SC_CLK_TCK"), **metrics_url(args)}
    if "algorithms" in session:
        plan["targets"] = targets
        for cell in plan["cells"]:
            cell.update(seconds=args.cell_seconds.get(cell["name"], args.seconds), sliceSeconds=args.slice_seconds,
                        warmupSeconds=args.warmup_seconds)
        return plan
    (own,) = targets
    plan["properties"].update(own["properties"])
    plan["pids"] = {k: v for k, v in plan["pids"].items() if k in own["processes"]}
    plan.update({k: v for k, v in own.items() if k == "metricsCollection"})
    for cell in plan["cells"]:
        cell["operations"] = ops.get(cell["name"], args.operations)
        if args.cell_seconds.get(cell["name"], args.seconds):
            cell["seconds"] = args.cell_seconds.get(cell["name"], args.seconds)
    if args.warmup_seconds:
        plan["warmup"] = {"workloads": [files[workloads[0]]], "seconds": args.warmup_seconds}
    return plan


class ClientJvm:
    """The YCSB client: one JVM (dev.fleproxy.ycsb.Session --serve) runs every session of the
    matrix in turn, so that its JIT is warm for all but the first; its stderr (the binding's
    messages) goes to DIR/raw/TOPOLOGY-client.log. A session that fails or hangs ends this JVM;
    the next session starts another."""

    def __init__(self, args):
        self.args, self.proc = args, None
        self.log_path = os.path.join(args.out, "raw", f"{args.topology}-client.log")

    def phases(self, plan_path: str, limit: float, log):
        """Yield each phase line of the plan's session; raise CellFailed if it errs or dies."""
        if self.proc is None or self.proc.poll() is not None:
            os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
            self.stderr = open(self.log_path, "a", encoding="utf-8")
            self.proc = subprocess.Popen([self.args.java, "-cp", self.args.jar, SESSION, "--serve"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        self.proc.stdin.write(plan_path + "\n")
        self.proc.stdin.flush()
        # A session that hangs prints nothing: a timer, not the reading loop, ends it.
        timer = threading.Timer(limit, self.proc.kill)
        timer.start()
        try:
            for line in self.proc.stdout:
                log.write(redact(line))
                log.flush()
                if not line.startswith("{"):
                    continue
                phase = json.loads(line)
                if phase["phase"] == "end":
                    return
                if phase["phase"] == "error":
                    raise CellFailed(f"the session of {plan_path} failed: {redact(phase['message'])}; "
                                     f"see {self.log_path}")
                yield phase
            fired = not timer.is_alive()
            self.proc.wait()
            if fired:
                raise CellFailed(f"the session of {plan_path} did not finish within {limit:g} s "
                                 f"({self.args.cell_timeout} s per phase); see {self.log_path}")
            raise CellFailed(f"the YCSB client exited with status {self.proc.returncode} during the session "
                             f"of {plan_path}; see {self.log_path}")
        except BaseException:
            self.close(kill=True)   # mid-session: nothing it does now can be recorded
            raise
        finally:
            timer.cancel()

    def close(self, kill=False) -> None:
        if self.proc is None:
            return
        try:
            if not kill:   # between sessions: end of input ends it
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()
        self.proc = None


def write_plan(path: str, plan: dict) -> None:
    """A session's plan holds the connection URLs, credentials included: readable by this user only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)   # a plan left by an earlier run keeps its mode otherwise
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(plan, f, indent=1)


def first_warmup(args, jvm, sessions, files) -> None:
    """Before the first session, an unrecorded one for each algorithm (in the first session's
    shape): a load of the smallest record count, --first-warmup-seconds of the first session's
    workloads, a drop; nothing is recorded but that it ran. With --interleave slice the first
    session holds every algorithm, so they warm up together, in slices, as long as theirs together."""
    workloads = sessions[0]["workloads"]
    warmed = set()
    for session in sessions:
        algorithms = session_algorithms(session)
        if warmed.issuperset(algorithms):
            continue
        warmed.update(algorithms)
        colls = [collection(a, session["table"]) for a in algorithms]
        plan = session_plan(args, {**session, "records": min(args.records)}, workloads[:1], files, {})
        plan.update(cells=[], warmup={"workloads": [files[w] for w in workloads],
                                      "seconds": args.first_warmup_seconds * len(algorithms)})
        print(f"matrix: first warm-up on {', '.join(algorithms)}: per algorithm, a load of {min(args.records):,} "
              f"records and {args.first_warmup_seconds:g} s of {', '.join(workloads)} (not recorded)", flush=True)
        run_unrecorded(args, jvm, plan, "sliced" if "algorithms" in session else colls[0], colls)


def run_unrecorded(args, jvm, plan, tag, colls) -> None:
    """Run a warm-up plan between drops of the collections it loads; keep only its raw log."""
    path = os.path.join(args.out, "raw", f"{args.topology}-first-warmup-{tag}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_plan(path + ".plan.json", plan)
    drop(args, colls)
    limit = args.cell_timeout * (2 + len(plan["warmup"]["workloads"])) * len(colls)
    with open(path + ".log", "w", encoding="utf-8") as log:
        for _ in jvm.phases(path + ".plan.json", limit, log):
            pass
    drop(args, colls)


def session_tag(args, session, workloads) -> str:
    """The name of a session's plan and log in DIR/raw/."""
    records, rep = session["records"], session["repeat"]
    if "algorithms" in session:
        return f"{args.topology}-{records}-{session['table']}-r{rep}-sliced"
    cell = f"-{workloads[0]}" if args.interleave == "cell" else ""
    return f"{args.topology}-{records}-{collection(session['algorithm'], session['table'])}-r{rep}{cell}"


def every_collection_loaded(args) -> bool:
    """Whether every algorithm's data is in the database while a cell runs (not just the measured one's)."""
    return args.keep_data or args.interleave == "slice"


def run_session(args, jvm, session, workloads, files, props, ops, ledger_path, done, progress) -> None:
    """Drop the session's collections, run it, record each load and cell as its line arrives (a
    cell the ledger holds already, measured beside the others by an earlier, interrupted run, is
    kept as it was), and drop them again unless --keep-data."""
    records, rep = session["records"], session["repeat"]
    colls = {a: collection(a, session["table"]) for a in session_algorithms(session)}
    sliced = "algorithms" in session
    tag = session_tag(args, session, workloads)
    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)
    plan_path, log_path = os.path.join(raw, f"{tag}.plan.json"), os.path.join(raw, f"{tag}.log")
    plan = session_plan(args, session, workloads, files, ops)
    write_plan(plan_path, plan)
    drop(args, list(colls.values()))
    if sliced:
        what = f"{', '.join(colls)} in {args.slice_seconds:g}-s slices: load each, then"
    else:
        what = f"{session['algorithm']} ({args.database}.{colls[session['algorithm']]}): load, " \
               f"{args.warmup_seconds:g} s warm-up,"
    print(f"matrix: {args.topology} {records:,} records, repeat {rep}: {what} {', '.join(workloads)}", flush=True)
    base = {"topology": args.topology, "records": records, "repeat": rep, "threads": args.threads,
            "data": "all algorithms" if every_collection_loaded(args) else "this algorithm only",
            **({"interleave": "slice"} if sliced else {})}
    limit = args.cell_timeout * (len(workloads) + 1 + ("warmup" in plan)) * len(colls)
    write_concern = None
    pending = [(a, w) for w in workloads for a in colls]

    def which(algorithm):   # a sliced session's tag names no algorithm
        return f" on {algorithm}" if sliced else ""

    with open(log_path, "w", encoding="utf-8") as log:
        for phase in jvm.phases(plan_path, limit, log):
            if phase["phase"] == "start":
                write_concern = phase.get("writeConcern")
                continue
            algorithm = phase.get("target", session.get("algorithm"))
            if algorithm not in colls:
                continue
            result = phase_result(phase)
            if phase["phase"] == "load":
                check_load(result, colls[algorithm], records, log_path)
                ledger.append(ledger_path, {**base, "algorithm": algorithm, "kind": "load", "table": session["table"],
                                            "write_concern": write_concern, "threads": plan["load"]["threads"],
                                            "started": now(), **figures(result)})
                print(f"matrix: loaded {colls[algorithm]} in {result['runtime_ms'] / 1000:.1f} s "
                      f"({result['throughput']:,.0f} inserts/s)", flush=True)
            elif phase["phase"] == "warmup":
                check_phase(result, f"warm-up on {colls[algorithm]}", args.max_error_rate, log_path,
                            read_only(props[workloads[0]]))
            elif phase["phase"] == "cell":
                w = phase["name"]
                check_phase(result, f"cell {tag} workload {w}{which(algorithm)}", args.max_error_rate, log_path,
                            read_only(props[w]))
                if (algorithm, w) in pending:
                    pending.remove((algorithm, w))
                if ledger.run_key(args.topology, algorithm, records, w, rep) in done:
                    continue   # measured by an earlier, interrupted run: kept as it was
                entry = {**base, "algorithm": algorithm, "kind": "run", "workload": w,
                         "write_concern": write_concern, "records_at_start": phase["records"],
                         "started": now(), **figures(result)}
                ledger.append(ledger_path, entry)
                progress.step(result["runtime_ms"] / 1000, describe(entry))
    if pending:
        raise CellFailed(f"session {tag} ended before {', '.join(w + which(a) for a, w in pending)}; see {log_path}")
    if not args.keep_data:
        drop(args, list(colls.values()))


def phase_result(phase: dict) -> dict:
    return {"throughput": phase["throughput"], "runtime_ms": phase["runtime_ms"],
            "operations": phase["operations"], "cpu_ms": phase.get("cpu_ms", {}),
            "proxy_added": proxy_added.summarize(phase.get("proxy_added")),
            "ops": ycsb_output.summarize(phase.get("measurements", {}))}


def figures(result: dict) -> dict:
    """What a ledger line keeps of a phase: throughput, per-operation figures, NOT_FOUND and
    error totals, and each measured process's CPU time per operation in µs."""
    n = result["operations"]
    return {"operations": n, "throughput": result["throughput"], "runtime_ms": round(result["runtime_ms"], 1),
            "seconds": round(result["runtime_ms"] / 1000, 2), "ops": result["ops"],
            "errors": sum(o["errors"] for o in result["ops"].values()),
            "not_found": sum(o["not_found"] for o in result["ops"].values()),
            "cpu_ms": result["cpu_ms"],
            "cpu_us_per_op": {k: round(v * 1000 / n, 2) for k, v in result["cpu_ms"].items()} if n else {},
            **({"proxy_added": result["proxy_added"]} if result.get("proxy_added") else {})}


def describe(entry: dict) -> str:
    cpu = entry["cpu_us_per_op"]
    extra = "".join(f", {k} {cpu[k]:.0f} µs/op" for k in ("proxy", "backend") if k in cpu)
    added = entry.get("proxy_added")
    if added and added.get("p99_us") is not None:
        extra += f", proxy adds p50 {added['p50_us']:.0f} / p99 {added['p99_us']:.0f} µs"
    flags = "".join(f", {entry[k]} {k.replace('_', ' ')}" for k in ("not_found", "errors") if entry.get(k))
    return (f"{entry['topology']} {entry['records']} {entry['workload']} {entry['algorithm']} r{entry['repeat']}: "
            f"{entry['throughput']:,.0f} ops/s{extra}{flags}")


def drop(args, colls) -> None:
    import pymongo
    client = pymongo.MongoClient(args.direct, serverSelectionTimeoutMS=10000)
    try:
        for name in colls:
            client[args.database][name].drop()
    finally:
        client.close()


def write_matrix_json(args, ops) -> None:
    """The parameters of each topology run into DIR (a second topology adds its own, it does not
    overwrite the first's)."""
    params = {"algorithms": ",".join(args.algorithms),
              "records": ",".join(map(str, args.records)), "workloads": ",".join(args.workloads),
              "repeats": args.repeats, "threads": args.threads, "operations per cell": args.operations,
              "seconds per cell": args.seconds or "no limit", "warm-up seconds per session": args.warmup_seconds,
              "first warm-up seconds per algorithm": args.first_warmup_seconds,
              "write concern": args.write_concern, "interleave": args.interleave, "data while a cell runs":
                  "every algorithm's collection" if every_collection_loaded(args) else "the measured algorithm's only",
              "load batch": args.load_batch, "error budget": args.max_error_rate,
              "proxy CPU measured": bool(args.proxy_pid), "backend CPU measured": bool(args.backend_pid),
              "proxy-added latency measured": bool(args.proxy_metrics)}
    if args.interleave == "slice":   # windows and warm-ups are per algorithm, in slices
        params["slice seconds"] = args.slice_seconds
        params["seconds per cell"] = f"{args.seconds:g} per algorithm"
        del params["warm-up seconds per session"]
        params["warm-up seconds per cell and algorithm"] = args.warmup_seconds
    for w, n in ops.items():
        params[f"operations for {w}"] = n
    for w, n in args.cell_seconds.items():
        params[f"seconds for {w}"] = n
    params.update({f"property {k}": v for k, v in args.extra_props.items()})
    path = os.path.join(args.out, "matrix.json")
    previous = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            previous = json.load(f)
    notes = list(dict.fromkeys(previous.get("notes", []) + args.note))
    topologies = dict(previous.get("topologies", {}))
    topologies[args.topology] = params
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"title": args.title or previous.get("title") or f"YCSB matrix ({args.topology})",
                   "topologies": topologies, "notes": notes}, f, indent=2)
        f.write("\n")


class Progress:
    """One line per finished cell with an ETA from the mean cell time so far."""

    def __init__(self, total: int):
        self.total, self.done, self.spent = total, 0, 0.0

    def step(self, seconds: float, what: str) -> None:
        self.done += 1
        self.spent += seconds
        left = (self.total - self.done) * self.spent / self.done
        print(f"[{self.done}/{self.total}] {what} ({seconds:.1f} s); ETA {fmt(left)}", flush=True)


def fmt(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


if __name__ == "__main__":
    sys.exit(main())
