"""Tests of report.py on a synthetic ledger: 2 topologies, 3 record counts, 5 algorithms,
workloads a and e, 2 repeats, one malformed line. Throughputs are made up so that every
expected number can be worked out by hand."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import matplotlib.image
from matplotlib.container import BarContainer
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

TOPOLOGIES = ("rs3", "rs6")
RECORDS = (10_000, 30_000, 50_000)
ALGORITHMS = ("direct", "plain", "aes", "aria", "3des")
WORKLOADS = ("a", "e")
FACTOR = {"direct": 1.0, "plain": 0.8, "aes": 0.7, "aria": 0.7, "3des": 0.5}


def throughput(topology, algorithm, records, workload, repeat):
    """rs6 at half of rs3; each size step -10 % of the 10k value; repeat 2 is +10 over repeat 1."""
    base = 1000.0 if workload == "a" else 400.0
    size = 1 - 0.1 * RECORDS.index(records)
    topo = 1.0 if topology == "rs3" else 0.5
    return base * FACTOR[algorithm] * size * topo + (10 if repeat == 2 else 0)


def run_line(topology, algorithm, records, workload, repeat):
    op = "SCAN" if workload == "e" else "READ"
    other = "INSERT" if workload == "e" else "UPDATE"
    return {"kind": "run", "topology": topology, "algorithm": algorithm, "records": records,
            "workload": workload, "repeat": repeat, "threads": 8, "operations": 2000,
            "throughput": throughput(topology, algorithm, records, workload, repeat),
            "seconds": 1.6, "started": "2026-11-22T07:00:00Z",
            "ops": {op: {"count": 1900, "avg_us": 800.0, "p95_us": 1500, "p99_us": 2400,
                         "errors": 0},
                    other: {"count": 100, "avg_us": 900.0, "p95_us": 1700, "p99_us": 2600,
                            "errors": 1}}}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A results directory with its ledger and matrix.json, and the report written once."""
    directory = tmp_path_factory.mktemp("results")
    lines = []
    for t in TOPOLOGIES:
        for n in RECORDS:
            for a in ALGORITHMS:
                lines.append(json.dumps({"kind": "load", "topology": t, "algorithm": a,
                                         "records": n, "threads": 8, "throughput": 5000.0,
                                         "seconds": 2.0, "started": "2026-11-22T07:00:00Z"}))
                for w in WORKLOADS:
                    for repeat in (1, 2):
                        lines.append(json.dumps(run_line(t, a, n, w, repeat)))
    lines.insert(7, '{"kind": "run", "topology": "rs3", "algorithm": "aes", "thro')
    (directory / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    (directory / "matrix.json").write_text(json.dumps({
        "title": "Synthetic matrix", "notes": ["made up | for tests"],
        "params": {"threads": 8, "repeats": 2, "records": list(RECORDS)}}))
    written = report.write_report(directory)
    return directory, written


def test_every_file_is_written_and_not_empty(results):
    directory, written = results
    names = {Path(p).relative_to(directory).as_posix() for p in written}
    expected = {"results.csv", "report.md"}
    for stem in ([f"throughput_{t}_{w}" for t in TOPOLOGIES for w in WORKLOADS]
                 + [f"topology_{w}" for w in WORKLOADS]
                 + [f"latency_{t}" for t in TOPOLOGIES]
                 + [f"overhead_{t}" for t in TOPOLOGIES]):
        expected |= {f"plots/{stem}.png", f"plots/{stem}.svg"}
    assert names == expected
    for p in written:
        assert Path(p).stat().st_size > 0, p


def test_pngs_are_readable_images(results):
    _, written = results
    for p in (p for p in written if p.endswith(".png")):
        image = matplotlib.image.imread(p)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_csv_has_one_row_per_run_line(results):
    directory, _ = results
    with open(directory / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(TOPOLOGIES) * len(RECORDS) * len(ALGORITHMS) * len(WORKLOADS) * 2
    assert {"READ_p95_us", "SCAN_p99_us", "UPDATE_errors", "INSERT_count"} <= set(rows[0])
    a_row = next(r for r in rows if r["workload"] == "a")
    assert a_row["READ_count"] == "1900" and a_row["SCAN_count"] == ""


def test_report_mentions_sections_and_the_malformed_line(results):
    directory, _ = results
    text = (directory / "report.md").read_text()
    assert text.startswith("# Synthetic matrix")
    assert "1 malformed line(s) ignored" in text
    assert "made up \\| for tests" not in text  # notes are list items, not table cells
    for heading in ("## Parameters", "## Notes", "## Throughput", "## Proxy overhead",
                    "## Latency", "## Beside the paper", "## Figures"):
        assert heading in text
    assert "1:3:5" in text
    assert "![Throughput, workload A, rs3](plots/throughput_rs3_a.png)" in text
    # Workload A, rs3, 10k: direct mean = (1000 + 1010) / 2.
    assert "| A | 1,005 |" in text


def test_percent_change_is_the_papers_arithmetic():
    assert report.pct_change(770.0, 1000.0) == pytest.approx(-23.0)
    assert report.pct_change(1391.0, 1500.0) == pytest.approx(-7.2667, abs=1e-3)
    assert report.pct_change(None, 1000.0) is None
    assert report.pct_change(5.0, 0) is None


def test_size_change_table_on_a_known_case():
    """3DES on workload A: 10k mean 505, 50k mean 405 -> (405 - 505) / 505 * 100 = -19.8 %."""
    runs = [report.parse_run(run_line("rs3", "3des", n, "a", r)) for n in RECORDS
            for r in (1, 2)]
    cells = report.throughput_cells(runs)
    rows = report.size_change_rows(cells, "rs3", ["a"], ["3des"], list(RECORDS))
    assert rows == [["A", "-9.9 / -19.8", report.PAPER_SIZE["a"]]]


def test_topology_change_against_the_first_topology():
    """AES on workload A at 10k: rs3 mean 705, rs6 mean 355 -> -49.6 %."""
    runs = [report.parse_run(run_line(t, "aes", 10_000, "a", r)) for t in TOPOLOGIES
            for r in (1, 2)]
    cells = report.throughput_cells(runs)
    rows = report.topology_change_rows(cells, "rs3", "rs6", ["a"], ["aes"], [10_000])
    assert rows == [["A", "-49.6", report.PAPER_TOPOLOGY["a"]]]


def test_error_bars_span_min_to_max():
    """The drawn error bar of each bar goes from the smallest to the largest repeat."""
    runs = [report.parse_run(dict(run_line("rs3", a, n, "a", 1), throughput=tp))
            for a, n, tp in (("aes", 10_000, 900.0), ("aes", 10_000, 980.0),
                             ("aes", 10_000, 1000.0), ("aes", 30_000, 800.0),
                             ("aes", 30_000, 850.0), ("plain", 10_000, 1200.0))]
    cells = report.throughput_cells(runs)
    assert report.error_extents(report.spread([900.0, 980.0, 1000.0])) == pytest.approx(
        (60.0, 40.0))
    fig = report.throughput_figure(cells, "rs3", "a", ["plain", "aes"], [10_000, 30_000],
                                   ["plain", "aes"])
    try:
        bars = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
        spans = [tuple(sorted(float(y) for y in segment[:, 1]))
                 for c in bars for segment in c.errorbar.lines[2][0].get_segments()]
        heights = sorted(round(b.get_height(), 6) for c in bars for b in c)
    finally:
        report.plt.close(fig)
    assert sorted(spans) == [(800.0, 850.0), (900.0, 1000.0), (1200.0, 1200.0)]
    assert heights == [825.0, 960.0, 1200.0]


def test_main_operation_rules():
    runs = [report.parse_run(run_line("rs3", "aes", 10_000, "e", 1))]
    assert report.main_operation("e", runs) == "SCAN"
    other = dict(run_line("rs3", "aes", 10_000, "messenger", 1))
    other["ops"] = {"INSERT": {"count": 5}, "READ": {"count": 50}, "UPDATE": {"count": 7}}
    assert report.main_operation("messenger", [report.parse_run(other)]) == "READ"
    assert report.main_operation("a", [report.parse_run(other)]) == "READ"


def test_ordering_puts_the_papers_order_first():
    assert report.ordered({"lea", "zzz", "3des", "plain", "aes", "abc"}, report.ALGORITHMS) == [
        "plain", "aes", "3des", "lea", "abc", "zzz"]
    assert report.ordered({"messenger", "f", "a", "caching"}, report.WORKLOADS) == [
        "a", "f", "caching", "messenger"]


def test_overhead_section_says_why_when_plain_is_missing(tmp_path):
    lines = [json.dumps(run_line("embedded", a, 10_000, "a", 1)) for a in ("direct", "aes")]
    (tmp_path / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    written = report.write_report(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "No `plain` runs" in text
    assert "Only one record count" in text and "Only one topology" in text
    assert not any(Path(p).name.startswith("overhead_") for p in written)


def run_cli(*args):
    script = Path(__file__).resolve().parent / "report.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)


def test_cli_exits_2_without_a_ledger(tmp_path):
    done = run_cli(str(tmp_path))
    assert done.returncode == 2
    assert "no ledger" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_cli_exits_2_without_run_lines(tmp_path):
    (tmp_path / "ledger.jsonl").write_text('{"kind": "load", "topology": "x"}\nnot json\n')
    done = run_cli(str(tmp_path))
    assert done.returncode == 2
    assert "no usable run lines" in done.stderr


def test_no_overhead_figure_when_no_ratio_has_both_cells(tmp_path):
    # plain and aes never share a record count (an interrupted matrix): tables say so, no crash
    lines = [json.dumps(run_line("embedded", "plain", 10_000, "a", 1)),
             json.dumps(run_line("embedded", "aes", 30_000, "a", 1))]
    (tmp_path / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    written = report.write_report(tmp_path)
    assert not any(Path(p).name.startswith("overhead_") for p in written)
    assert (tmp_path / "report.md").stat().st_size > 0
