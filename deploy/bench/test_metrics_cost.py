"""metrics_cost.py: pairs' side-by-side rounds pooled into one rule-5 verdict."""
import csv

from . import metrics_cost

FIELDS = ["round", "target", "kind", "transport", "suite", "tls", "metrics", "operation", "ops", "seconds",
          "ops_per_second", "mean_latency_ms", "cpu_ms", "cpu_ms_per_1000_ops", "alloc_sampled_bytes_per_op",
          "alloc_exact_bytes_per_op"]


def write_pair(path, rounds):
    """rounds: [(cpu per 1,000 ops with metrics, without), ...] for the proxy without policy; AES at twice."""
    path.parent.mkdir(parents=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        # a sequential round: not side by side, never judged here
        w.writerow(dict(round="1", target="off", kind="proxy-plain", suite="", metrics="false", operation="insert",
                        ops=1000, cpu_ms_per_1000_ops="999"))
        for n, (on, off) in enumerate(rounds, 1):
            for kind, suite, scale in (("proxy-plain", "", 1), ("encrypted", "AES_GCM", 2)):
                for op in ("insert", "read"):
                    for metrics, cpu in (("true", on), ("false", off)):
                        w.writerow(dict(round=f"s{n}", target=f"{kind} {metrics}", kind=kind, suite=suite,
                                        metrics=metrics, operation=op, ops=2000, cpu_ms_per_1000_ops=str(cpu * scale)))
    return path


def test_rounds_of_all_pairs_are_pooled_and_each_pair_shown(tmp_path):
    a = write_pair(tmp_path / "pair-1" / "overhead.csv", [(41, 40), (42, 40), (40.4, 40)])   # 1.025, 1.05, 1.01
    b = write_pair(tmp_path / "pair-2" / "overhead.csv", [(39.6, 40), (40, 40), (40.8, 40)])  # 0.99, 1.0, 1.02
    out = tmp_path / "metrics-cost.md"
    assert metrics_cost.main([str(a), str(b), "--out", str(out)]) == 0
    lines = {ln["kind"]: ln for ln in metrics_cost.judge([metrics_cost.read_pair(a), metrics_cost.read_pair(b)])}
    plain = lines["proxy-plain"]
    assert plain["rounds"] == 6
    assert abs(plain["pooled"] - 1.015) < 1e-9             # the median of the six ratios
    assert [round(r, 3) for r in plain["pairs"]] == [1.025, 1.0]
    assert plain["met"] and abs(lines["encrypted"]["pooled"] - plain["pooled"]) < 1e-9
    md = out.read_text()
    assert "| no policy | 6 |" in md and "| 1.015 |" in md and "1.025, 1.000 | 1.015 | not read | met" in md
    assert "pair-1/overhead.md" in md


def test_over_the_limit_is_not_met_and_a_control_run_says_so(tmp_path):
    a = write_pair(tmp_path / "pair-1" / "overhead.csv", [(42, 40), (42.4, 40)])
    out = tmp_path / "control.md"
    assert metrics_cost.main([str(a), "--out", str(out), "--control"]) == 0
    md = out.read_text()
    assert "A/A control" in md and "**not met**" in md


def test_no_side_by_side_rounds_is_an_error(tmp_path, capsys):
    a = write_pair(tmp_path / "pair-1" / "overhead.csv", [])
    assert metrics_cost.main([str(a), "--out", str(tmp_path / "x.md")]) == 2
    assert "no side-by-side rounds" in capsys.readouterr().err


def test_the_compilers_share_is_left_out_of_the_judged_ratio_and_shown(tmp_path):
    """With jit_cpu_ms, the judged ratio is the steady state's (the compilers' CPU taken out of each
    twin's), the ratio of all CPU stands beside it, and so do the compilers' ms per 1,000 operations."""
    path = tmp_path / "pair-1" / "overhead.csv"
    path.parent.mkdir(parents=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS + ["jit_cpu_ms"])
        w.writeheader()
        # per 1,000 operations: with metrics 44 of which 3 compiling, without 41 of which 1
        for metrics, cpu, jit in (("true", 44, 3), ("false", 41, 1)):
            w.writerow(dict(round="s1", target=metrics, kind="proxy-plain", suite="", metrics=metrics,
                            operation="insert", ops=1000, cpu_ms_per_1000_ops=str(cpu), jit_cpu_ms=str(jit)))
    line = metrics_cost.judge([metrics_cost.read_pair(path)])[0]
    assert abs(line["pooled"] - 41 / 40) < 1e-9 and abs(line["all_cpu"] - 44 / 41) < 1e-9
    assert line["jit_read"] and line["jit_on"] == 3 and line["jit_off"] == 1
    out = tmp_path / "m.md"
    assert metrics_cost.main([str(path), "--out", str(out)]) == 0
    assert "| 1.025 |" in out.read_text() and "| 1.073 | 3.0 / 1.0 | met |" in out.read_text()


def test_without_the_compilers_column_all_cpu_is_judged(tmp_path):
    a = write_pair(tmp_path / "pair-1" / "overhead.csv", [(41, 40)])
    line = metrics_cost.judge([metrics_cost.read_pair(a)])[0]
    assert not line["jit_read"] and abs(line["pooled"] - line["all_cpu"]) < 1e-9
    out = tmp_path / "m.md"
    metrics_cost.main([str(a), "--out", str(out)])
    assert "| not read |" in out.read_text()


def test_the_latency_added_is_read_round_by_round_when_the_csv_has_percentiles(tmp_path):
    """p50/p99 of the side-by-side rounds: medians with and without, and the median of the differences."""
    path = tmp_path / "pair-1" / "overhead.csv"
    path.parent.mkdir(parents=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS + ["jit_cpu_ms", "p50_latency_ms", "p99_latency_ms"])
        w.writeheader()
        for n, (p50_on, p50_off, p99_on, p99_off) in enumerate([(0.60, 0.50, 2.0, 1.5), (0.70, 0.55, 3.0, 2.0)], 1):
            for metrics, p50, p99 in (("true", p50_on, p99_on), ("false", p50_off, p99_off)):
                w.writerow(dict(round=f"s{n}", target=metrics, kind="encrypted", suite="AES_GCM", metrics=metrics,
                                operation="read", ops=1000, cpu_ms_per_1000_ops="40", p50_latency_ms=str(p50),
                                p99_latency_ms=str(p99)))
    out = tmp_path / "m.md"
    assert metrics_cost.main([str(path), "--out", str(out), "--feature", "audit"]) == 0
    md = out.read_text()
    assert "## Latency" in md
    assert "| AES-GCM, ten fields | read | 2 | 0.650 | 0.525 | +125 | 2.500 | 1.750 | +750 |" in md, md
    # an older CSV without the columns: no latency section
    a = write_pair(tmp_path / "pair-2" / "overhead.csv", [(41, 40)])
    metrics_cost.main([str(a), "--out", str(tmp_path / "n.md")])
    assert "## Latency" not in (tmp_path / "n.md").read_text()
