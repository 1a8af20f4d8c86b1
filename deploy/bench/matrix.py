#!/usr/bin/env python3
"""Run a YCSB benchmark matrix: algorithm x record count x workload x repeat, resumable.

Every algorithm has its own collection (ycsb.usertable_aes, ...), so choosing the algorithm is
choosing the collection and so the key the proxy's policy names for it; the proxy is never
restarted. `direct` goes to the database without the proxy, `plain` through the proxy to a
collection without a policy; the others through the proxy to an encrypted collection.

Per record count: each algorithm's collection is loaded once (dropped first), then for each
repeat and workload every algorithm runs in turn (interleaved, so drift on a shared machine hits
all algorithms alike). Each finished load and cell appends a line to DIR/ledger.jsonl; a second
run with the same DIR skips what the ledger holds, so an interrupted matrix resumes. At the end
the report (report.md, results.csv, plots/) is written next to the ledger.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ledger  # noqa: E402
import ycsb_output  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_JAR = os.path.join(REPO, "ycsb-workloads", "binding", "target", "fle-ycsb.jar")
DEFAULT_WORKLOADS_DIR = os.path.join(REPO, "ycsb-workloads", "workloads")
BINDING = "dev.fleproxy.ycsb.MongoDbClient"
KNOWN_ALGORITHMS = ("direct", "plain", "aes", "aria", "3des", "seed", "lea")
# Record shape YCSB uses unless a workload file says otherwise.
DEFAULT_SHAPE = {"fieldcount": "10", "fieldlength": "100"}


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
                   "count and drop collections")
    p.add_argument("--proxy", help="MongoDB URL of mongo-fle-proxy (needed for every algorithm but direct)")
    p.add_argument("--database", default="ycsb")
    p.add_argument("--algorithms", default="direct,plain,aes,aria,3des", type=csv,
                   help=f"any of {','.join(KNOWN_ALGORITHMS)}")
    p.add_argument("--records", default="1000000,3000000,5000000", type=csv_ints)
    p.add_argument("--workloads", default="a,b,c,d,e,f", type=csv,
                   help="names of files in --workloads-dir: a = workloada, caching = workload_caching, ...")
    p.add_argument("--topology", default="rs3", help="label of the deployment, e.g. rs3, rs6, embedded")
    p.add_argument("--repeats", default=3, type=int)
    p.add_argument("--threads", default=100, type=int)
    p.add_argument("--operations", default=100000, type=int, help="operations per cell")
    p.add_argument("--operations-for", action="append", default=[], metavar="WORKLOAD=N",
                   help="a different operation count for one workload (repeatable)")
    p.add_argument("--warmup", default=0, type=int, metavar="N",
                   help="before the first cell, N unrecorded operations of the first workload per algorithm, so "
                   "the first cells do not meet a cold proxy and database (JIT, caches)")
    p.add_argument("--load-threads", type=int, help="threads for loading (default: --threads)")
    p.add_argument("--load-batch", default=100, type=int, help="documents per insert while loading")
    p.add_argument("--out", required=True, help="results directory (ledger, report, raw YCSB logs)")
    p.add_argument("--title", help="title of the report")
    p.add_argument("--note", action="append", default=[], help="a line for the report's notes (repeatable)")
    p.add_argument("--keep-data", action="store_true", help="do not drop a record count's collections when done")
    p.add_argument("--cell-timeout", default=3600, type=int, help="seconds before a YCSB phase counts as failed")
    p.add_argument("--max-error-rate", default=0.01, type=float, metavar="F",
                   help="a run phase whose operations failed more often than this fraction counts as failed "
                        "and is not recorded (a load may have no failed insert)")
    p.add_argument("--property", action="append", default=[], metavar="KEY=VALUE", dest="properties",
                   help="a YCSB or binding property for every phase, e.g. mongodb.writeConcern=w1 (repeatable)")
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
    unknown = [a for a in args.algorithms if a not in KNOWN_ALGORITHMS]
    if unknown:
        raise MatrixError(f"unknown algorithm(s) {', '.join(unknown)}; known: {', '.join(KNOWN_ALGORITHMS)}")
    if any(a != "direct" for a in args.algorithms) and not args.proxy:
        raise MatrixError("--proxy is needed for every algorithm but direct")
    if args.repeats < 1 or args.threads < 1 or args.operations < 1:
        raise MatrixError("--repeats, --threads and --operations must be at least 1")
    if not os.path.isfile(args.jar):
        raise MatrixError(f"no YCSB runner jar at {args.jar} (build it with `make build`)")
    args.extra_props = extra_properties(args.properties)


# Properties the runner sets per phase; --property may not change them.
RUNNER_PROPERTIES = ("recordcount", "operationcount", "table", "mongodb.url", "mongodb.batchsize", "mongodb.upsert")


def extra_properties(items: list) -> dict:
    props = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise MatrixError(f"--property wants KEY=VALUE, not '{item}'")
        if key in RUNNER_PROPERTIES:
            raise MatrixError(f"--property {key}: the runner sets it per phase ({', '.join(RUNNER_PROPERTIES)})")
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


# ---------------------------------------------------------------------------------------------
# Running YCSB


class CellFailed(Exception):
    """A YCSB phase failed; the message says which and where its output is."""


def ycsb(args, phase: str, workload_path: str, props: dict, threads: int, log_path: str) -> dict:
    cmd = [args.java, "-cp", args.jar, "site.ycsb.Client", "-db", BINDING, phase, "-P", workload_path,
           "-threads", str(threads)]
    for k, v in {**args.extra_props, **props}.items():
        cmd += ["-p", f"{k}={v}"]
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("# " + redact(" ".join(cmd)) + "\n")
        log.flush()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True, timeout=args.cell_timeout)
        except subprocess.TimeoutExpired:
            raise CellFailed(f"YCSB {phase} did not finish within {args.cell_timeout} s; see {log_path}")
        log.write(proc.stdout)
    if proc.returncode != 0:
        raise CellFailed(f"YCSB {phase} exited with status {proc.returncode}; see {log_path}")
    try:
        result = ycsb_output.parse(proc.stdout)
    except ycsb_output.YcsbOutputError as e:
        raise CellFailed(f"YCSB {phase}: {e}; see {log_path}")
    check_errors(result, phase, 0.0 if phase == "-load" else args.max_error_rate, log_path)
    return result


def check_errors(result: dict, phase: str, max_rate: float, log_path: str) -> None:
    """YCSB exits 0 when its client threads cannot start (nothing done) and when operations fail
    (the database or the proxy went away mid-run): such a phase is a failed cell, not a figure."""
    errors = sum(o["errors"] for o in result["ops"].values())
    total = sum(o["count"] for o in result["ops"].values())
    if total == 0:
        raise CellFailed(f"YCSB {phase} did no operation (its client threads failed to start); see {log_path}")
    if errors and errors > max_rate * total:
        raise CellFailed(f"YCSB {phase}: {errors} of {total} operations failed "
                         f"(more than {max_rate:.0%}); see {log_path}")


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
    cells = [(r, rep, w, a) for r in args.records for rep in range(1, args.repeats + 1)
             for w in args.workloads for a in args.algorithms]
    pending = [c for c in cells if ledger.run_key(args.topology, c[3], c[0], c[2], c[1]) not in done]
    print(f"matrix: {len(cells)} cells, {len(cells) - len(pending)} already in {ledger_path}, "
          f"{len(pending)} to run", flush=True)
    if pending:
        check_reachable(args)
    progress = Progress(len(pending))
    for records in args.records:
        todo = [c for c in pending if c[0] == records]
        if not todo:
            continue
        load_all(args, records, todo, files, tables, ledger_path, done)
        if args.warmup and records == min(c[0] for c in pending):
            warm_up(args, records, todo, files, tables)
        for _, rep, w, a in todo:
            run_cell(args, records, rep, w, a, files, tables, ops, ledger_path, progress)
        if not args.keep_data:
            drop_tables(args, records, {(c[3], tables[c[2]]) for c in todo})

    if not args.no_report:
        import report
        try:
            written = report.write_report(args.out)
        except report.LedgerError as e:
            raise MatrixError(f"no report: {e}")
        print(f"matrix: wrote {', '.join(os.path.relpath(p) for p in written[:3])} and {len(written) - 3} more")
    return 0


def collection(algorithm: str, table: str) -> str:
    return f"{table}_{algorithm}"


def load_all(args, records, todo, files, tables, ledger_path, done) -> None:
    """Load each (algorithm, table) this record count still needs, unless the ledger and the data agree it is there."""
    import pymongo
    client = pymongo.MongoClient(args.direct, serverSelectionTimeoutMS=10000)
    try:
        db = client[args.database]
        needed = {}
        for _, _, w, a in todo:
            needed.setdefault((a, tables[w]), w)
        for (algorithm, table), workload in needed.items():
            name = collection(algorithm, table)
            key = ledger.load_key(args.topology, algorithm, records, table)
            if key in done and db[name].estimated_document_count() >= records:
                print(f"matrix: {name} already holds {records} records (ledger), not reloading", flush=True)
                continue
            db[name].drop()
            started, t0 = now(), time.monotonic()
            print(f"matrix: loading {records} records into {args.database}.{name} ({algorithm})", flush=True)
            result = ycsb(args, "-load", files[workload], {
                "recordcount": records, "table": name, "mongodb.url": url_for(args, algorithm),
                "mongodb.batchsize": args.load_batch,
            }, args.load_threads or args.threads,
                os.path.join(args.out, "raw", f"{args.topology}-{records}-{name}-load.log"))
            entry = {"kind": "load", "topology": args.topology, "algorithm": algorithm, "records": records,
                     "table": table, "threads": args.load_threads or args.threads,
                     "throughput": result["throughput"], "seconds": round(time.monotonic() - t0, 2),
                     "started": started}
            ledger.append(ledger_path, entry)
            done.add(key)
            print(f"matrix: loaded in {entry['seconds']:.1f} s ({result['throughput']:.0f} inserts/s)", flush=True)
    finally:
        client.close()


def run_cell(args, records, rep, workload, algorithm, files, tables, ops, ledger_path, progress) -> None:
    n = ops.get(workload, args.operations)
    name = collection(algorithm, tables[workload])
    started, t0 = now(), time.monotonic()
    result = ycsb(args, "-t", files[workload], {
        "recordcount": records, "operationcount": n, "table": name, "mongodb.url": url_for(args, algorithm),
        "mongodb.upsert": "true",  # D, E and the messenger insert keys an earlier workload may have inserted
    }, args.threads, os.path.join(args.out, "raw", f"{args.topology}-{records}-{workload}-{algorithm}-r{rep}.log"))
    seconds = time.monotonic() - t0
    entry = {"kind": "run", "topology": args.topology, "algorithm": algorithm, "records": records,
             "workload": workload, "repeat": rep, "threads": args.threads, "operations": n,
             "throughput": result["throughput"], "runtime_ms": result["runtime_ms"],
             "seconds": round(seconds, 2), "started": started, "ops": result["ops"]}
    ledger.append(ledger_path, entry)
    errors = sum(o["errors"] for o in result["ops"].values())
    progress.step(seconds, f"{args.topology} {records} {workload} {algorithm} r{rep}: "
                  f"{result['throughput']:.0f} ops/s" + (f", {errors} errors (see raw log)" if errors else ""))


def warm_up(args, records, todo, files, tables) -> None:
    """Unrecorded operations per algorithm on the collections just loaded."""
    workload = todo[0][2]
    for algorithm in dict.fromkeys(c[3] for c in todo):
        print(f"matrix: warm-up, {args.warmup} operations of {workload} on {algorithm} (not recorded)", flush=True)
        ycsb(args, "-t", files[workload], {
            "recordcount": records, "operationcount": args.warmup, "table": collection(algorithm, tables[workload]),
            "mongodb.url": url_for(args, algorithm), "mongodb.upsert": "true",
        }, args.threads, os.path.join(args.out, "raw", f"{args.topology}-warmup-{algorithm}.log"))


def drop_tables(args, records, pairs) -> None:
    import pymongo
    client = pymongo.MongoClient(args.direct, serverSelectionTimeoutMS=10000)
    try:
        for algorithm, table in sorted(pairs):
            client[args.database][collection(algorithm, table)].drop()
    finally:
        client.close()
    print(f"matrix: {records} records done; dropped its collections", flush=True)


def write_matrix_json(args, ops) -> None:
    params = {"topology": args.topology, "algorithms": ",".join(args.algorithms),
              "records": ",".join(map(str, args.records)), "workloads": ",".join(args.workloads),
              "repeats": args.repeats, "threads": args.threads, "operations per cell": args.operations,
              "load batch": args.load_batch, "warm-up operations per algorithm": args.warmup}
    for w, n in ops.items():
        params[f"operations for {w}"] = n
    path = os.path.join(args.out, "matrix.json")
    previous = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            previous = json.load(f)
    notes = list(dict.fromkeys(previous.get("notes", []) + args.note))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"title": args.title or previous.get("title") or f"YCSB matrix ({args.topology})",
                   "params": params, "notes": notes}, f, indent=2)
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
