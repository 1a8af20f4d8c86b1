"""Units of the matrix runner: YCSB output parsing (on output captured from real runs), the ledger,
the naming rules, the error budget and NOT_FOUND, the sessions' plans and order. The runner end to
end, through the real proxy (load-measure-drop, CPU per operation, write concern), is in
proxy/tests/test_ycsb.py."""
import json
import os

import pytest

from . import ledger, matrix, proxy_added, ycsb_output

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
    assert matrix.extra_properties(["mongodb.readPreference=primary", " maxexecutiontime = 60 "]) == \
        {"mongodb.readPreference": "primary", "maxexecutiontime": "60"}
    with pytest.raises(matrix.MatrixError, match="KEY=VALUE"):
        matrix.extra_properties(["mongodb.writeConcern"])
    with pytest.raises(matrix.MatrixError, match="--property table: the runner sets it"):
        matrix.extra_properties(["table=mine"])


def phase(errors=0, count=1000, not_found=0):
    """count operations, of which errors failed and not_found missed (YCSB's count is of the OK ones)."""
    return {"throughput": 1.0, "runtime_ms": 1.0,
            "ops": {"READ": {"count": count - errors - not_found, "errors": errors, "not_found": not_found}}}


def test_the_default_error_budget_is_zero():
    assert matrix.parse_args(["--direct", "mongodb://h", "--out", "x"]).max_error_rate == 0.0
    matrix.check_phase(phase(0), "cell", 0.0, "log")
    with pytest.raises(matrix.CellFailed, match="1 of 1000 operations failed \\(none may fail; --max-error-rate\\); see log"):
        matrix.check_phase(phase(1), "cell", 0.0, "log")


def test_a_larger_error_budget_is_honoured():
    matrix.check_phase(phase(10), "cell", 0.01, "log")  # 1 %: recorded, with its error count
    with pytest.raises(matrix.CellFailed, match="11 of 1000 operations failed \\(more than 1.00%"):
        matrix.check_phase(phase(11), "cell", 0.01, "log")
    with pytest.raises(matrix.CellFailed, match="did no operation"):  # YCSB counts nothing when no thread starts
        matrix.check_phase({"throughput": 0.0, "runtime_ms": 811.0, "ops": {}}, "cell", 0.01, "log")


def test_not_found_fails_a_read_only_workload_only():
    d = matrix.DEFAULT_WORKLOADS_DIR
    props = {w: matrix.workload_properties(matrix.workload_file(w, d)) for w in "abcdef"}
    assert [w for w in "abcdef" if matrix.read_only(props[w])] == ["c"]
    assert not matrix.read_only({})  # CoreWorkload's defaults update 5 %
    matrix.check_phase(phase(not_found=3), "cell a", 0.0, "log", read_only_workload=False)
    with pytest.raises(matrix.CellFailed, match="3 of 1000 reads found no record"):
        matrix.check_phase(phase(not_found=3), "cell c", 0.0, "log", read_only_workload=True)


def test_write_concern_is_the_runners_to_set():
    args = matrix.parse_args(["--direct", "mongodb://h", "--out", "x"])
    assert args.write_concern == "w1"
    with pytest.raises(matrix.MatrixError, match="--property mongodb.writeConcern: .*--write-concern"):
        matrix.extra_properties(["mongodb.writeConcern=majority"])


def test_sessions_interleave_algorithms_and_rotate_their_order():
    args = matrix.parse_args(["--direct", "mongodb://h", "--out", "x", "--records", "10,30", "--repeats", "3",
                              "--algorithms", "direct,plain,aes", "--workloads", "a,c"])
    sessions = matrix.plan_sessions(args, {"a": "usertable", "c": "usertable"})
    assert [(s["records"], s["repeat"], s["algorithm"]) for s in sessions[:9]] == [
        (10, 1, "direct"), (10, 1, "plain"), (10, 1, "aes"),
        (10, 2, "plain"), (10, 2, "aes"), (10, 2, "direct"),
        (10, 3, "aes"), (10, 3, "direct"), (10, 3, "plain")]
    assert all(s["workloads"] == ["a", "c"] for s in sessions) and len(sessions) == 18


def test_a_session_plan_loads_warms_and_measures_with_explicit_write_concern(tmp_path):
    jar = tmp_path / "fle-ycsb.jar"
    jar.write_text("")
    args = matrix.parse_args(["--direct", "mongodb://db:1", "--proxy", "mongodb://proxy:2", "--out", str(tmp_path),
                              "--jar", str(jar), "--seconds", "2", "--seconds-for", "e=6", "--warmup-seconds", "3",
                              "--proxy-pid", "11", "--backend-pid", "22", "--write-concern", "majority"])
    matrix.check_args(args)
    files = {w: matrix.workload_file(w, args.workloads_dir) for w in "ae"}
    session = {"records": 5000, "repeat": 1, "algorithm": "aes", "table": "usertable", "workloads": ["a", "e"]}
    plan = matrix.session_plan(args, session, ["a", "e"], files, {})
    assert plan["properties"]["mongodb.url"] == "mongodb://proxy:2/ycsb"
    assert plan["properties"]["table"] == "usertable_aes"
    assert plan["properties"]["mongodb.writeConcern"] == "majority"
    assert "mongodb.upsert" not in plan["properties"]      # inserts continue the key sequence instead
    assert plan["load"]["records"] == 5000 and plan["warmup"]["seconds"] == 3
    assert [(c["name"], c["seconds"]) for c in plan["cells"]] == [("a", 2), ("e", 6)]
    assert plan["pids"] == {"proxy": 11, "backend": 22}
    direct = matrix.session_plan(args, dict(session, algorithm="direct"), ["a"], files, {})
    assert direct["pids"] == {"backend": 22} and direct["properties"]["mongodb.url"] == "mongodb://db:1/ycsb"


def test_parameters_are_kept_per_topology(tmp_path):
    for topology, threads in (("rs3", "100"), ("rs6", "50")):
        args = matrix.parse_args(["--direct", "mongodb://h", "--out", str(tmp_path), "--topology", topology,
                                  "--threads", threads, "--note", f"note {topology}"])
        args.extra_props, args.cell_seconds = {}, {}
        matrix.write_matrix_json(args, {})
    saved = json.loads((tmp_path / "matrix.json").read_text())
    assert saved["topologies"]["rs3"]["threads"] == 100 and saved["topologies"]["rs6"]["threads"] == 50
    assert saved["notes"] == ["note rs3", "note rs6"]


def test_cell_interleaving_alternates_algorithms_cell_by_cell():
    args = matrix.parse_args(["--direct", "mongodb://h", "--out", "x", "--records", "10", "--repeats", "2",
                              "--algorithms", "direct,plain,aes", "--workloads", "a,c", "--interleave", "cell"])
    sessions = matrix.plan_sessions(args, {"a": "usertable", "c": "usertable"})
    assert [(s["repeat"], s["workloads"], s["algorithm"]) for s in sessions] == [
        (1, ["a"], "direct"), (1, ["a"], "plain"), (1, ["a"], "aes"),
        (1, ["c"], "plain"), (1, ["c"], "aes"), (1, ["c"], "direct"),
        (2, ["a"], "plain"), (2, ["a"], "aes"), (2, ["a"], "direct"),
        (2, ["c"], "aes"), (2, ["c"], "direct"), (2, ["c"], "plain")]


def test_a_plan_with_credentials_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "p.plan.json"
    matrix.write_plan(str(path), {"properties": {"mongodb.url": "mongodb://alice:s3cret@h:1/ycsb"}})
    assert json.loads(path.read_text())["properties"]["mongodb.url"].startswith("mongodb://alice:")
    assert path.stat().st_mode & 0o077 == 0


def test_slice_interleaving_runs_every_algorithm_in_one_session_per_record_count_and_repeat(tmp_path):
    jar = tmp_path / "fle-ycsb.jar"
    jar.write_text("")
    args = matrix.parse_args(["--direct", "mongodb://db:1", "--proxy", "mongodb://proxy:2", "--out", str(tmp_path),
                              "--jar", str(jar), "--records", "10,30", "--repeats", "2", "--algorithms",
                              "direct,plain,aes", "--workloads", "a,e", "--interleave", "slice", "--seconds", "3",
                              "--seconds-for", "e=4", "--slice-seconds", "0.2", "--warmup-seconds", "0.5",
                              "--proxy-pid", "11", "--backend-pid", "22"])
    matrix.check_args(args)
    sessions = matrix.plan_sessions(args, {"a": "usertable", "e": "usertable"})
    assert [(s["records"], s["repeat"], s["algorithms"]) for s in sessions] == [
        (10, 1, ["direct", "plain", "aes"]), (10, 2, ["plain", "aes", "direct"]),
        (30, 1, ["direct", "plain", "aes"]), (30, 2, ["plain", "aes", "direct"])]
    files = {w: matrix.workload_file(w, args.workloads_dir) for w in "ae"}
    plan = matrix.session_plan(args, sessions[1], ["a", "e"], files, {})
    assert [(t["name"], t["properties"]["table"], t["properties"]["mongodb.url"], t["processes"])
            for t in plan["targets"]] == [
        ("plain", "usertable_plain", "mongodb://proxy:2/ycsb", ["proxy", "backend"]),
        ("aes", "usertable_aes", "mongodb://proxy:2/ycsb", ["proxy", "backend"]),
        ("direct", "usertable_direct", "mongodb://db:1/ycsb", ["backend"])]   # the idle proxy is not direct's
    assert [(c["name"], c["seconds"], c["sliceSeconds"], c["warmupSeconds"]) for c in plan["cells"]] == [
        ("a", 3, 0.2, 0.5), ("e", 4, 0.2, 0.5)]
    assert plan["load"]["records"] == 10 and plan["pids"] == {"proxy": 11, "backend": 22}
    assert plan["properties"]["mongodb.writeConcern"] == "w1" and "table" not in plan["properties"]


def test_slice_interleaving_needs_time_windows(tmp_path):
    jar = tmp_path / "fle-ycsb.jar"
    jar.write_text("")
    args = matrix.parse_args(["--direct", "mongodb://h", "--proxy", "mongodb://p", "--out", str(tmp_path),
                              "--jar", str(jar), "--interleave", "slice"])
    with pytest.raises(matrix.MatrixError, match="needs --seconds"):
        matrix.check_args(args)


def test_plans_name_the_proxys_metrics_and_each_algorithms_label(tmp_path):
    jar = tmp_path / "fle-ycsb.jar"
    jar.write_text("")
    common = ["--direct", "mongodb://db:1", "--proxy", "mongodb://proxy:2", "--out", str(tmp_path), "--jar", str(jar),
              "--algorithms", "direct,plain,aes", "--workloads", "a", "--seconds", "3", "--records", "10"]
    url = "http://127.0.0.1:9464/metrics"
    files = {"a": matrix.workload_file("a", matrix.DEFAULT_WORKLOADS_DIR)}
    args = matrix.parse_args(common + ["--interleave", "slice", "--proxy-metrics", url])
    matrix.check_args(args)
    plan = matrix.session_plan(args, matrix.plan_sessions(args, {"a": "usertable"})[0], ["a"], files, {})
    assert plan["proxyMetrics"] == url
    assert {t["name"]: t.get("metricsCollection") for t in plan["targets"]} == {
        "direct": None, "plain": "other", "aes": "ycsb.usertable_aes"}
    args = matrix.parse_args(common + ["--proxy-metrics", url])
    matrix.check_args(args)
    sessions = matrix.plan_sessions(args, {"a": "usertable"})
    plans = {s["algorithm"]: matrix.session_plan(args, s, ["a"], files, {}) for s in sessions}
    assert plans["aes"]["metricsCollection"] == "ycsb.usertable_aes" and plans["aes"]["proxyMetrics"] == url
    assert "metricsCollection" not in plans["direct"]
    without = matrix.parse_args(common)
    matrix.check_args(without)
    assert "proxyMetrics" not in matrix.session_plan(without, sessions[0], ["a"], files, {})


def test_the_proxys_histogram_becomes_p50_p99_and_mean():
    # 100 requests: 60 within 50 µs, 39 more within 100 µs, 1 above 10 ms
    histogram = {"buckets": [[2.5e-05, 10], [5e-05, 60], [0.0001, 99], [0.01, 99], [None, 100]],
                 "sum_s": 0.02, "count": 100}
    added = proxy_added.summarize(histogram)
    # p50: rank 50 inside (25 µs, 50 µs], 40 of its 50 → 25 + 25 × 0.8 = 45 µs
    assert added == {"p50_us": 45.0, "p99_us": 100.0, "mean_us": 200.0, "count": 100}
    assert proxy_added.quantile([[1e-05, 0], [None, 5]], 0.99) == 1e-05   # in +Inf: the largest finite bound
    assert proxy_added.summarize({"buckets": [], "sum_s": 0, "count": 0}) is None
    assert proxy_added.summarize(None) is None
    result = {"throughput": 10.0, "runtime_ms": 1000, "operations": 10, "cpu_ms": {"proxy": 1.0}, "ops": {},
              "proxy_added": added}
    entry = matrix.figures(result)
    assert entry["proxy_added"] == added and entry["cpu_us_per_op"] == {"proxy": 100.0}
    assert "proxy_added" not in matrix.figures({**result, "proxy_added": None})
