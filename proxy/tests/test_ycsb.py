"""The YCSB binding and the matrix runner through the real proxy (PyKMIP keys, embedded backend).

The binding is driven by YCSB's own CommandLine (every operation, one at a time) and Client
(load with batches, run phases); the runner on a tiny matrix, killed mid-run and resumed, watched
while it runs (only the measured algorithm's collection holds data), with the proxy's and the
backend's CPU per operation and the write concern recorded for every cell.
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from bson import Binary

from conftest import AES_256, ROOT, TDES, EncryptingProxy, client, free_port, wait_for_port

YCSB_JAR = ROOT / "ycsb-workloads" / "binding" / "target" / "fle-ycsb.jar"
WORKLOADS = ROOT / "ycsb-workloads" / "workloads"
# the matrix runner, run as the demo and the bench image run it: a module of the package deploy.bench
MATRIX = [sys.executable, "-m", "deploy.bench.matrix"]
BINDING = "dev.fleproxy.ycsb.MongoDbClient"

POLICY = f"""  ycsb.usertable_aes:  {{ key: {AES_256}, fields: "*" }}
  ycsb.usertable_3des: {{ key: {TDES}, fields: "*" }}
  ycsb.cli_aes:        {{ key: {AES_256}, fields: "*" }}
"""


@pytest.fixture(scope="module")
def enc(workdir, backend, kms):
    p = EncryptingProxy(workdir, backend.port, kms, POLICY, name="proxy-ycsb", admin=True).start()
    wait_for_port(p.admin_port, p.proc)
    yield p
    p.stop()


@pytest.fixture(scope="module")
def raw(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.ycsb
    c.close()


def ycsb_java(main, *args, stdin=None, timeout=120):
    assert YCSB_JAR.exists(), "build the YCSB jar first (make build)"
    return subprocess.run(["java", "-cp", str(YCSB_JAR), main, "-db", BINDING, *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def assert_envelopes_only(doc, plaintexts):
    for field, value in doc.items():
        if field == "_id":
            continue
        # pymongo hands subtype 0 (what the embedded backend stores) back as bytes
        assert isinstance(value, (bytes, Binary)) and value[0] == 0x82, f"{field} is stored as {type(value).__name__}"
        for p in plaintexts:
            assert p.encode() not in bytes(value)


def test_every_operation_through_the_encrypting_proxy(enc, raw):
    raw.cli_aes.drop()
    script = "\n".join([
        "insert k1 f1=secret-one f2=secret-two",
        "insert k2 f1=secret-three",
        "insert k3 f1=secret-four",
        "read k1",
        "read k1 f2",
        "update k1 f1=secret-five",
        "read k1",
        "scan k2 5",
        "delete k3",
        "read k3",
        "quit",
    ]) + "\n"
    # -table, not the shell's `table` command: in YCSB 0.17 that one changes nothing
    r = ycsb_java("site.ycsb.CommandLine", "-table", "cli_aes", "-p", f"mongodb.url={enc.uri()}/ycsb", stdin=script)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    # reads: both fields, then only the projected one, then the updated value
    assert "f1=secret-one\nf2=secret-two" in out
    reads = out.split("Return code: OK")
    assert "f2=secret-two" in reads[2] and "f1=" not in reads[2].split(">")[0]
    assert "f1=secret-five" in out
    # scan from k2: k2 and k3, in _id order
    scan = out[out.index("Record 0"):]
    assert scan.index("f1=secret-three") < scan.index("f1=secret-four")
    assert "Return code: NOT_FOUND" in out  # k3 after the delete
    stored = list(raw.cli_aes.find().sort("_id"))
    assert [d["_id"] for d in stored] == ["k1", "k2"]
    for d in stored:
        assert_envelopes_only(d, ["secret-one", "secret-two", "secret-three", "secret-five"])


def test_batched_load_and_a_run_phase_with_scans(enc, raw):
    raw.usertable_3des.drop()
    url = f"{enc.uri()}/ycsb"
    load = ycsb_java("site.ycsb.Client", "-load", "-P", str(WORKLOADS / "workloade"), "-threads", "2",
                     "-p", "recordcount=120", "-p", "table=usertable_3des", "-p", f"mongodb.url={url}",
                     "-p", "mongodb.batchsize=7")  # 120 = 17 batches of 7 and a last one of 1 flushed at cleanup
    assert load.returncode == 0, load.stderr
    assert "[INSERT], Return=OK" in load.stdout and "ERROR" not in load.stdout
    assert raw.usertable_3des.count_documents({}) == 120
    assert_envelopes_only(raw.usertable_3des.find_one(), [])
    run = ycsb_java("site.ycsb.Client", "-t", "-P", str(WORKLOADS / "workloade"), "-threads", "2",
                    "-p", "recordcount=120", "-p", "operationcount=60", "-p", "table=usertable_3des",
                    "-p", f"mongodb.url={url}", "-p", "mongodb.upsert=true")
    assert run.returncode == 0, run.stderr
    assert "[SCAN], Return=OK" in run.stdout and "ERROR" not in run.stdout


def test_bad_binding_properties_are_named(enc):
    for prop, says in [("mongodb.batchsize=0", "mongodb.batchsize must be a positive integer"),
                       ("mongodb.writeConcern=sometimes", "mongodb.writeConcern: unknown name"),
                       ("mongodb.url=mongodb://127.0.0.1:1/ycsb?serverSelectionTimeoutMS=500", "cannot reach")]:
        r = ycsb_java("site.ycsb.Client", "-t", "-P", str(WORKLOADS / "workloadc"), "-p", "operationcount=1",
                      "-p", f"mongodb.url={enc.uri()}/ycsb", "-p", prop, timeout=60)
        assert says in r.stdout + r.stderr, prop


# ---- the matrix runner -----------------------------------------------------------------------

def matrix(backend, enc, out, *extra, popen=False):
    cmd = [*MATRIX, "--direct", f"mongodb://127.0.0.1:{backend.port}", "--proxy", enc.uri(),
           "--algorithms", "direct,plain,aes", "--records", "200,600", "--workloads", "a,e", "--threads", "2",
           "--operations", "100", "--operations-for", "e=20", "--warmup-seconds", "0.5", "--topology", "tiny",
           "--proxy-pid", str(enc.proc.pid), "--backend-pid", str(backend.proc.pid), "--out", str(out), *extra]
    if popen:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, cwd=ROOT)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)


def run_keys(out: Path):
    lines = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines() if line.strip()]
    return [(e["algorithm"], e["records"], e["workload"], e["repeat"]) for e in lines if e["kind"] == "run"]


class CollectionWatch:
    """Polls the backend while the matrix runs: the most YCSB collections ever present at once."""

    def __init__(self, raw):
        self.raw, self.most, self.seen, self.stop = raw, 0, set(), threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)

    def watch(self):
        while not self.stop.is_set():
            names = {n for n in self.raw.list_collection_names() if n.startswith("usertable_")}
            self.seen |= names
            self.most = max(self.most, len(names))
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def test_matrix_end_to_end_resumes_after_a_kill(tmp_path, backend, enc, raw):
    out = tmp_path / "run"
    for name in raw.list_collection_names():
        raw.drop_collection(name)
    with CollectionWatch(raw) as watch:
        proc = matrix(backend, enc, out, "--repeats", "2", popen=True)
        for line in proc.stdout:  # kill the runner and its YCSB after the second cell
            if line.startswith("[2/"):
                os.killpg(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=60)
        assert len(run_keys(out)) == 2

        r = matrix(backend, enc, out, "--repeats", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "24 cells in 12 sessions, 2 already in" in r.stdout
    keys = run_keys(out)
    assert len(keys) == 24 and len(set(keys)) == 24
    # load, measure, drop: one algorithm's collection at a time, none left at the end
    assert watch.seen == {"usertable_direct", "usertable_plain", "usertable_aes"} and watch.most == 1
    assert not [n for n in raw.list_collection_names() if n.startswith("usertable_")]
    entries = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    runs = [e for e in entries if e["kind"] == "run"]
    scans = [e for e in runs if e["workload"] == "e"]
    assert all(e["ops"]["SCAN"]["count"] > 0 and e["ops"]["SCAN"]["errors"] == 0 for e in scans)
    assert {e["write_concern"] for e in entries} == {"w:1"}
    assert all(e["errors"] == 0 and e["not_found"] == 0 and e["data"] == "this algorithm only" for e in runs)
    # CPU per operation: the backend's for every cell, the proxy's for every cell through it
    # (/proc counts in 10 ms ticks: a cell this small may spend less than one in a process)
    assert all({"backend", "client"} <= set(e["cpu_us_per_op"]) for e in runs)
    assert all(("proxy" in e["cpu_us_per_op"]) == (e["algorithm"] != "direct") for e in runs)
    for process in ("backend", "client", "proxy"):
        assert sum(e["cpu_us_per_op"].get(process, 0) for e in runs) > 0, process
    # a cell starts its insert keys after every key loaded or inserted before it (A inserts none)
    e_cells = sorted((e["records"], e["repeat"], e["records_at_start"]) for e in scans if e["algorithm"] == "aes")
    assert all(start == records for records, _, start in e_cells)
    assert "| parameter | tiny |" in (out / "report.md").read_text()
    for name in ["report.md", "results.csv", "matrix.json"]:
        assert (out / name).stat().st_size > 0, name
    pngs = sorted((out / "plots").glob("*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert all(p.with_suffix(".svg").exists() for p in pngs)
    assert "| A |" in (out / "report.md").read_text()


def test_matrix_refuses_bad_input_and_keeps_the_ledger(tmp_path, backend, enc):
    out = tmp_path / "bad"
    out.mkdir()
    ledger = out / "ledger.jsonl"
    ledger.write_text('{"kind": "run", "topology": "tiny", "algorithm": "aes", "records": 1, "workload": "a", '
                      '"repeat": 1, "throughput": 1.0, "ops": {}}\n')
    before = ledger.read_text()

    r = matrix(backend, enc, out, "--workloads", "a,zz")
    assert r.returncode == 2 and "unknown workload 'zz'" in r.stderr

    dead = f"mongodb://127.0.0.1:{free_port()}/?serverSelectionTimeoutMS=500"
    r = subprocess.run([*MATRIX, "--direct", dead, "--algorithms", "direct", "--records", "10",
                        "--workloads", "c", "--out", str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and "cannot reach the database (--direct)" in r.stderr

    r = matrix(backend, enc, out, "--algorithms", "des")
    assert r.returncode == 2 and "unknown algorithm(s) des" in r.stderr

    # YCSB failing mid-matrix (here: killed by the cell timeout): exit 1, its log named, nothing recorded.
    # The session's limit is the timeout per phase times its phases (about 8 s here); 200,000 records
    # loaded in 3.5 s on an idle machine and were recorded, so the load is made far longer than that.
    r = matrix(backend, enc, out, "--algorithms", "plain", "--records", "5000000", "--cell-timeout", "1")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "(1 s per phase)" in r.stderr and "did not finish within" in r.stderr and "run the same command again to resume" in r.stderr
    assert ledger.read_text() == before


def test_keep_data_keeps_every_algorithms_collection(tmp_path, backend, enc, raw):
    out = tmp_path / "keep"
    r = matrix(backend, enc, out, "--algorithms", "plain,aes", "--records", "150", "--workloads", "c",
               "--repeats", "1", "--operations", "30", "--keep-data", "--no-report")
    assert r.returncode == 0, r.stdout + r.stderr
    assert raw.usertable_plain.count_documents({}) == 150 and raw.usertable_aes.count_documents({}) == 150
    runs = [json.loads(l) for l in (out / "ledger.jsonl").read_text().splitlines() if '"run"' in l]
    assert {e["data"] for e in runs} == {"all algorithms"}
    raw.drop_collection("usertable_plain")
    raw.drop_collection("usertable_aes")


def test_matrix_stops_when_the_proxy_dies_mid_matrix_and_resumes(tmp_path, workdir, backend, kms):
    """YCSB exits 0 when its client threads cannot connect (and when operations fail, see
    deploy/bench/test_matrix.py): the runner must not record such a cell as a figure."""
    proxy = EncryptingProxy(workdir, backend.port, kms, POLICY, name="proxy-dying").start()
    out = tmp_path / "dying"
    cmd = [*MATRIX, "--direct", f"mongodb://127.0.0.1:{backend.port}",
           "--proxy", proxy.uri() + "/?serverSelectionTimeoutMS=300", "--algorithms", "aes", "--records", "300",
           "--workloads", "c", "--repeats", "1", "--threads", "2", "--operations", "60", "--topology", "tiny",
           "--warmup-seconds", "0", "--out", str(out)]
    try:
        runner = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        for line in runner.stdout:
            if line.startswith("matrix: loaded"):
                proxy.stop()  # the cell's YCSB meets a dead proxy
                break
        rest = runner.stdout.read()
        assert runner.wait(timeout=300) == 1, rest
        # the cell may finish a read or two before the proxy is gone: most of its 60 fail
        failed = re.search(r"workload c: (\d+) of 60 operations failed \(none may fail", rest)
        assert failed and int(failed.group(1)) >= 50, rest
        assert "run the same command again to resume" in rest
        assert [json.loads(l)["kind"] for l in (out / "ledger.jsonl").read_text().splitlines()] == ["load"]

        proxy.start()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 to run" in r.stdout and "matrix: loaded" in r.stdout   # the session loads afresh
        runs = [json.loads(l) for l in (out / "ledger.jsonl").read_text().splitlines() if '"run"' in l]
        assert len(runs) == 1 and runs[0]["ops"]["READ"]["errors"] == 0
    finally:
        proxy.stop()


def test_sliced_matrix_measures_the_algorithms_in_one_window(tmp_path, backend, enc, raw):
    """--interleave slice: per record count, one session holds every algorithm's collection and
    alternates them in slices; each gets its whole window, its own CPU share and insert keys."""
    out = tmp_path / "sliced"
    for name in raw.list_collection_names():
        raw.drop_collection(name)
    with CollectionWatch(raw) as watch:
        r = matrix(backend, enc, out, "--repeats", "1", "--interleave", "slice", "--seconds", "0.6", "--slice-seconds", "0.1",
                   "--warmup-seconds", "0.2", "--first-warmup-seconds", "0.3",
                   "--proxy-metrics", f"http://127.0.0.1:{enc.admin_port}/metrics")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "12 cells in 2 sessions" in r.stdout
    assert watch.most == 3 and not [n for n in raw.list_collection_names() if n.startswith("usertable_")]
    entries = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    runs = [e for e in entries if e["kind"] == "run"]
    assert sorted(run_keys(out)) == sorted((a, n, w, 1) for a in ("direct", "plain", "aes")
                                           for n in (200, 600) for w in "ae")
    assert len([e for e in entries if e["kind"] == "load"]) == 6
    assert all(e["data"] == "all algorithms" and e["errors"] == 0 and e["not_found"] == 0 for e in runs)
    # each algorithm had its whole window, in slices of its own
    assert all(e["runtime_ms"] >= 600 for e in runs)
    assert all(("proxy" in e["cpu_us_per_op"]) == (e["algorithm"] != "direct") for e in runs)
    for process in ("backend", "client", "proxy"):
        assert sum(e["cpu_us_per_op"].get(process, 0) for e in runs) > 0, process
    # E's inserts continue after the records loaded (and those its own warm-up inserted) into that
    # algorithm's own collection: none hit an existing key, which would have been an error above
    assert all(e["records_at_start"] >= e["records"] for e in runs if e["workload"] == "e")
    assert json.loads((out / "matrix.json").read_text())["topologies"]["tiny"]["interleave"] == "slice"
    # what the proxy added to each request of a target, from its /metrics around the window: read
    # under the target's own collection label (plain's is "other"); direct bypasses the proxy
    for e in runs:
        added = e.get("proxy_added")
        if e["algorithm"] == "direct":
            assert added is None
        else:
            assert added and 0 < added["p50_us"] <= added["p99_us"] and added["count"] > 0, e
    report_text = (out / "report.md").read_text()
    assert "## What the proxy adds per request" in report_text
