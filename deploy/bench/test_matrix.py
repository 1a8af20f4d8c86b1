"""Units of the matrix runner: YCSB output parsing (on output captured from real runs), the ledger,
the naming rules. The runner end to end, through the real proxy, is in proxy/tests/test_ycsb.py."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ledger  # noqa: E402
import matrix  # noqa: E402
import ycsb_output  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def captured(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return f.read()


def test_parses_a_scan_workload():
    r = ycsb_output.parse(captured("ycsb-run-e.txt"))
    assert r["throughput"] == pytest.approx(55.668955279272595)
    assert r["runtime_ms"] == 5389.0
    assert set(r["ops"]) == {"SCAN", "INSERT"}
    assert r["ops"]["SCAN"]["count"] == 284 and r["ops"]["SCAN"]["errors"] == 0
    assert r["ops"]["SCAN"]["p95_us"] > 0 and r["ops"]["SCAN"]["p99_us"] >= r["ops"]["SCAN"]["p95_us"]


def test_not_found_is_counted_apart_and_failed_sections_are_folded():
    r = ycsb_output.parse(captured("ycsb-run-messenger.txt"))
    assert r["ops"]["READ"]["not_found"] == 3 and r["ops"]["READ"]["errors"] == 0
    assert "READ-FAILED" not in r["ops"]
    assert r["ops"]["DELETE"]["count"] == 28


def test_batched_inserts_are_not_errors():
    r = ycsb_output.parse(captured("ycsb-load.txt"))
    assert r["ops"]["INSERT"]["count"] == 2000 and r["ops"]["INSERT"]["errors"] == 0
    assert "CLEANUP" not in r["ops"]


def test_errors_are_counted():
    text = captured("ycsb-run-e.txt").replace("[SCAN], Return=OK, 284", "[SCAN], Return=OK, 280\n[SCAN], Return=ERROR, 4")
    assert ycsb_output.parse(text)["ops"]["SCAN"]["errors"] == 4


def test_output_of_an_unfinished_phase_is_refused():
    text = "\n".join(l for l in captured("ycsb-run-e.txt").splitlines() if not l.startswith("[OVERALL]"))
    with pytest.raises(ycsb_output.YcsbOutputError, match="did not finish"):
        ycsb_output.parse(text)


def test_ledger_survives_a_torn_last_line(tmp_path):
    path = str(tmp_path / "ledger.jsonl")
    entry = {"kind": "run", "topology": "t", "algorithm": "aes", "records": 10, "workload": "a", "repeat": 1}
    ledger.append(path, entry)
    with open(path, "a") as f:
        f.write('{"kind": "run", "topol')  # the writer died here
    assert ledger.done_keys(path) == {ledger.run_key("t", "aes", 10, "a", 1)}
    ledger.append(path, dict(entry, repeat=2))
    assert ledger.done_keys(path) == {ledger.run_key("t", "aes", 10, "a", 1), ledger.run_key("t", "aes", 10, "a", 2)}
    assert [json.loads(l)["repeat"] for l in open(path) if l.startswith('{"algorithm"')] == [1, 2]


def test_load_keys_name_their_table(tmp_path):
    path = str(tmp_path / "ledger.jsonl")
    ledger.append(path, {"kind": "load", "topology": "t", "algorithm": "aes", "records": 10, "table": "caching"})
    assert ledger.load_key("t", "aes", 10, "caching") in ledger.done_keys(path)
    assert ledger.load_key("t", "aes", 10) not in ledger.done_keys(path)


def test_workload_names_and_tables():
    d = matrix.DEFAULT_WORKLOADS_DIR
    assert matrix.workload_file("a", d).endswith("workloada")
    assert matrix.workload_file("messenger", d).endswith("workload_messenger")
    with pytest.raises(matrix.MatrixError, match="unknown workload 'g'.*a, b, c"):
        matrix.workload_file("g", d)
    for w in "abcdef":
        assert matrix.table_for(w, matrix.workload_properties(matrix.workload_file(w, d))) == "usertable"
    assert matrix.table_for("caching", matrix.workload_properties(matrix.workload_file("caching", d))) == "caching"


def test_every_workload_file_opens_with_purpose_mix_and_distribution():
    d = matrix.DEFAULT_WORKLOADS_DIR
    for name in os.listdir(d):
        head = open(os.path.join(d, name)).read().split("\n\n")[0].split("recordcount")[0]
        for word in ("Purpose:", "Mix:", "Distribution:"):
            assert word in head, f"{name} lacks '{word}'"


def test_database_goes_into_the_url():
    assert matrix.with_database("mongodb://h:1", "ycsb") == "mongodb://h:1/ycsb"
    assert matrix.with_database("mongodb://h:1,k:2/other?w=1", "ycsb") == "mongodb://h:1,k:2/ycsb?w=1"
    assert matrix.with_database("mongodb://h:1/?serverSelectionTimeoutMS=5", "ycsb") == \
        "mongodb://h:1/ycsb?serverSelectionTimeoutMS=5"


def test_credentials_are_redacted_from_what_is_printed():
    assert matrix.redact("-p mongodb.url=mongodb://alice:s3cret@h:1/ycsb -p x=1") == "-p mongodb.url=mongodb://h:1/ycsb -p x=1"
    assert matrix.redact("mongodb+srv://u:p@cluster.example/db") == "mongodb+srv://cluster.example/db"
    assert matrix.redact("mongodb://h:1/ycsb") == "mongodb://h:1/ycsb"


def test_extra_properties_reach_every_phase_but_not_the_runners_own():
    assert matrix.extra_properties(["mongodb.writeConcern=w1", " maxexecutiontime = 60 "]) == \
        {"mongodb.writeConcern": "w1", "maxexecutiontime": "60"}
    with pytest.raises(matrix.MatrixError, match="KEY=VALUE"):
        matrix.extra_properties(["mongodb.writeConcern"])
    with pytest.raises(matrix.MatrixError, match="--property table: the runner sets it"):
        matrix.extra_properties(["table=mine"])


def phase(errors, count=1000):
    return {"throughput": 1.0, "runtime_ms": 1.0, "ops": {"READ": {"count": count, "errors": errors}}}


def test_a_phase_with_too_many_failed_operations_is_a_failed_cell():
    matrix.check_errors(phase(0), "-t", 0.01, "log")
    matrix.check_errors(phase(10), "-t", 0.01, "log")  # 1 %: recorded, with its error count
    with pytest.raises(matrix.CellFailed, match="11 of 1000 operations failed .*see log"):
        matrix.check_errors(phase(11), "-t", 0.01, "log")
    with pytest.raises(matrix.CellFailed, match="1 of 1000"):
        matrix.check_errors(phase(1), "-load", 0.0, "log")  # a load may lose no record
    with pytest.raises(matrix.CellFailed, match="did no operation"):  # YCSB exits 0 when no thread starts
        matrix.check_errors({"throughput": 0.0, "runtime_ms": 811.0, "ops": {}}, "-t", 0.01, "log")
