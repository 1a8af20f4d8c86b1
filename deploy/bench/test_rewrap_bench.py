"""rewrap_bench.py: reading the workload's operations off its status lines, and the report."""
import csv

from . import rewrap_bench


class FakeWorkload(rewrap_bench.Workload):
    def __init__(self, marks):  # no YCSB process: just its stamped status lines
        self.marks = marks


def test_a_window_counts_operations_between_the_status_lines_at_its_edges():
    w = FakeWorkload([(0.0, 0), (1.0, 100), (2.0, 300), (3.0, 600), (4.0, 1000)])
    assert w.window(1.5, 3.7) == (2.0, 500)   # lines at 1.0 and 3.0
    assert w.ops_at(0.5) == (0.0, 0)


def test_status_lines_are_recognised():
    line = "2026-11-24 20:40:01:123 12 sec: 34567 operations; 2880.5 current ops/sec; [READ: Count=10]"
    assert rewrap_bench.Workload.PROGRESS.search(line).group(1) == "34567"


def row(repeat, run, window, **figures):
    return {"repeat": repeat, "run": run, "window": window, **figures}


def test_the_report_gives_medians_and_the_workloads_share_kept(tmp_path):
    args = rewrap_bench.parse_args(["--proxy-port", "1", "--proxy-pid", "1", "--backend-pid", "1", "--config", "x",
                                    "--proxy-log", "x", "--old-key", "o", "--new-key", "n", "--repeats", "2",
                                    "--out", str(tmp_path)])
    rows = [row(rep, "alone", "rewrap", docs=5000, docs_per_s=400.0 + rep, rewrap_cpu_ms_per_doc=1.5) for rep in (1, 2)]
    rows.append(row(0, "under load", "workload without", ops_per_s=1000.0, window_s=15.0,
                    proxy_cpu_ms_per_1000_ops=80.0, backend_cpu_ms_per_1000_ops=90.0))
    for rep, (during, after) in enumerate(((600.0, 1400.0), (840.0, 1000.0)), 1):
        rows += [row(rep, "under load", "rewrap", docs=5000, docs_per_s=200.0, rewrap_cpu_ms_per_doc=2.0),
                 row(rep, "under load", "workload during", ops_per_s=during, window_s=25.0,
                     proxy_cpu_ms_per_1000_ops=85.0, backend_cpu_ms_per_1000_ops=200.0),
                 row(rep, "under load", "workload without", ops_per_s=after, window_s=15.0,
                     proxy_cpu_ms_per_1000_ops=70.0, backend_cpu_ms_per_1000_ops=90.0)]
    rewrap_bench.write_report(args, rows)
    md = (tmp_path / "rewrap.md").read_text()
    assert "| alone | 402 (401–402) | 1.50 (1.50–1.50) |" in md
    assert "| while rewrap runs | 720 (600–840) |" in md
    assert "| without rewrap | 1,000 (1,000–1,400) |" in md
    # 600 / mean(1000, 1400) = 50 %, 840 / mean(1400, 1000) = 70 %
    assert "the workload kept 60 (50–70) % of its throughput without it" in md
    with open(tmp_path / "rewrap.csv") as f:
        got = list(csv.DictReader(f))
    assert len(got) == 9 and got[2]["window"] == "workload without" and got[2]["ops_per_s"] == "1000.000"
