"""Tests of report.py on a synthetic ledger (2 topologies, 3 record counts, 5 algorithms,
workloads a and e, 2 repeats, one malformed line; throughputs made up so that every expected
number can be worked out by hand) and on a ledger recorded by `make demo` (testdata/)."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import matplotlib.image
from matplotlib.container import BarContainer
import pytest

from . import plots, report, stats
from .names import ALGORITHMS as CANONICAL_ALGORITHMS, WORKLOADS as CANONICAL_WORKLOADS, ordered

ROOT = Path(__file__).resolve().parents[2]

TOPOLOGIES = ("rs3", "rs6")
RECORDS = (10_000, 30_000, 50_000)
ALGORITHMS = ("direct", "plain", "aes", "aria", "3des")
WORKLOADS = ("a", "e")
FACTOR = {"direct": 1.0, "plain": 0.8, "aes": 0.7, "aria": 0.7, "3des": 0.5}
CPU = {"plain": 50.0, "aes": 60.0, "aria": 70.0, "3des": 90.0}


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
            "seconds": 1.6, "started": "2026-11-22T07:00:00Z", "write_concern": "w:1",
            "cpu_us_per_op": {"backend": 40.0, "client": 300.0,
                              **({"proxy": CPU[algorithm] + repeat} if algorithm in CPU else {})},
            "ops": {op: {"count": 1900, "avg_us": 800.0, "p95_us": 1500, "p99_us": 2400,
                         "errors": 0, "not_found": 0},
                    other: {"count": 100, "avg_us": 900.0, "p95_us": 1700, "p99_us": 2600,
                            "errors": 1, "not_found": 2}}}


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
        "topologies": {"rs3": {"threads": 8, "repeats": 2}, "rs6": {"threads": 8, "repeats": 2,
                                                                    "write concern": "w1"}}}))
    written = report.write_report(directory)
    return directory, written


def test_every_file_is_written_and_not_empty(results):
    directory, written = results
    names = {Path(p).relative_to(directory).as_posix() for p in written}
    expected = {"results.csv", "report.md"}
    for stem in ([f"throughput_{t}_{w}" for t in TOPOLOGIES for w in WORKLOADS]
                 + [f"topology_{w}" for w in WORKLOADS]
                 + [f"latency_{t}" for t in TOPOLOGIES]
                 + [f"ratios_{t}" for t in TOPOLOGIES]
                 + [f"cpu_{p}_{t}" for t in TOPOLOGIES for p in ("proxy", "backend")]):
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
    assert {"READ_p95_us", "SCAN_p99_us", "UPDATE_errors", "INSERT_count", "UPDATE_not_found",
            "write_concern", "proxy_cpu_us_per_op", "backend_cpu_us_per_op", "not_found"} <= set(rows[0])
    a_row = next(r for r in rows if r["workload"] == "a" and r["algorithm"] == "aes")
    assert a_row["READ_count"] == "1900" and a_row["SCAN_count"] == ""
    assert a_row["write_concern"] == "w:1" and a_row["proxy_cpu_us_per_op"] == "61.0"
    assert a_row["not_found"] == "2" and a_row["errors"] == "1"


def test_report_mentions_sections_and_the_malformed_line(results):
    directory, _ = results
    text = (directory / "report.md").read_text()
    assert text.startswith("# Synthetic matrix")
    assert "1 malformed line(s) ignored" in text
    assert "made up \\| for tests" not in text  # notes are list items, not table cells
    for heading in ("## Parameters", "## Notes", "## How to read", "## What each cipher costs",
                    "## CPU per operation", "## Throughput", "## Ratios per record count", "## Latency",
                    "## Loads", "## Beside the paper", "## Figures"):
        assert heading in text
    assert "1:3:5" in text
    assert "| parameter | rs3 | rs6 |" in text and "| write concern | – | w1 |" in text
    assert "Write concern of the cells, as the binding set it: w:1." in text
    assert "![Throughput, workload A, rs3](plots/throughput_rs3_a.png)" in text
    # Workload A, rs3, 10k: direct median (1000 + 1010) / 2, repeats 1000 and 1010.
    assert "| A | 1,005 (1,000–1,010) |" in text
    assert "Ordering plain < AES < ARIA < 3DES of the medians holds in workload(s) A, E." in text


def test_percent_change_is_the_papers_arithmetic():
    assert report.pct_change(770.0, 1000.0) == pytest.approx(-23.0)
    assert report.pct_change(1391.0, 1500.0) == pytest.approx(-7.2667, abs=1e-3)
    assert report.pct_change(None, 1000.0) is None
    assert report.pct_change(5.0, 0) is None


def test_size_change_uses_the_papers_arithmetic_on_medians():
    """3DES on workload A: 10k median 505, 50k median 405 -> (405 - 505) / 505 * 100 = -19.8 %;
    the repeats (500, 510) and (400, 410) do not overlap, so the change is not labelled noise."""
    runs = [report.parse_line(run_line("rs3", "3des", n, "a", r)) for n in RECORDS for r in (1, 2)]
    spreads = report.throughput_spreads(runs)
    assert report.change(spreads, ("rs3", "3des", 50_000, "a"), ("rs3", "3des", 10_000, "a")) == "-19.8"
    # 10k vs 30k of workload E at 3DES: medians 205 and 185 ... still apart; make them overlap:
    noisy = [report.parse_line(dict(run_line("rs3", "aes", n, "a", r), throughput=tp))
             for n, r, tp in ((10_000, 1, 100.0), (10_000, 2, 120.0), (30_000, 1, 110.0), (30_000, 2, 125.0))]
    spreads = report.throughput_spreads(noisy)
    assert report.change(spreads, ("rs3", "aes", 30_000, "a"), ("rs3", "aes", 10_000, "a")) == "≈+6.8"


def test_topology_change_against_the_first_topology(results):
    """AES on workload A at 10k: rs3 median 705, rs6 median 355 -> -49.6 %."""
    directory, _ = results
    text = (directory / "report.md").read_text()
    assert "#### rs6 vs rs3" in text
    row = next(l for l in text.splitlines() if l.startswith("| A |") and report.PAPER_TOPOLOGY["a"] in l)
    assert "-49.6" in row.split("|")[4]  # the AES column: direct, plain, AES, ...


def test_paired_ratios_pair_the_same_repeat():
    assert stats.paired_ratios({(1, 1): 90.0, (1, 2): 80.0, (2, 1): 50.0},
                               {(1, 1): 100.0, (1, 2): 100.0}) == [0.9, 0.8]


def test_bootstrap_interval_is_reproducible_and_holds_the_median():
    values = [0.91, 0.95, 0.88, 0.93, 0.97, 0.90]
    lo, hi = stats.bootstrap_interval(values)
    assert (lo, hi) == stats.bootstrap_interval(values)
    assert lo <= sorted(values)[2] <= sorted(values)[3] <= hi
    assert min(values) <= lo and hi <= max(values)
    assert stats.bootstrap_interval([0.9]) is None


def test_a_ratio_is_within_noise_when_its_interval_holds_one():
    clear = stats.ratio_summary([0.80, 0.82, 0.85, 0.79, 0.81, 0.83])
    assert not clear["within_noise"] and clear["hi"] < 1
    assert report.fmt_interval(clear).startswith("0.81 [")
    unclear = stats.ratio_summary([0.96, 1.03, 0.99, 1.02, 0.97, 1.01])
    assert unclear["within_noise"] and unclear["lo"] < 1 < unclear["hi"]
    assert report.fmt_interval(unclear).startswith("≈ 1.00 [")
    two = stats.ratio_summary([0.9, 1.1])     # two repeats: the interval is their range
    assert (two["lo"], two["hi"], two["within_noise"]) == (0.9, 1.1, True)


def test_synthetic_ratios_and_their_labels(results):
    """AES/plain is 0.7/0.8 of the varying part in every pair: never within noise; AES and ARIA
    are made equal, so ARIA/AES would be 1 (not a series); plain/direct 0.8."""
    directory, _ = results
    text = (directory / "report.md").read_text()
    section = text.split("## What each cipher costs")[1].split("## CPU")[0]
    row = next(l for l in section.splitlines() if l.startswith("| A |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "A" and cells[1].startswith("0.80 [") and cells[2].startswith("0.88 [")
    assert not any(c.startswith("≈") for c in cells)


def test_cpu_ordering_names_where_it_breaks():
    cpu = {("t", "plain", "a"): {"median": 50}, ("t", "aes", "a"): {"median": 60},
           ("t", "aria", "a"): {"median": 58}, ("t", "3des", "a"): {"median": 90},
           ("t", "plain", "c"): {"median": 50}, ("t", "aes", "c"): {"median": 60},
           ("t", "aria", "c"): {"median": 70}, ("t", "3des", "c"): {"median": 90}}
    assert report.cpu_ordering(cpu, "t", ["a", "c"], ["plain", "aes", "aria", "3des"]) == (["c"], ["a"])


RECORDED = Path(__file__).resolve().parent / "testdata" / "ledger-embedded.jsonl"


def test_recorded_ledger_ratios_match_a_hand_computation(tmp_path):
    """On a ledger `make demo` wrote (its 10,000-record cells): the AES/plain figure of every workload is the median of the
    per-(records, repeat) ratios, its interval holds that median, and ≈ appears exactly when the
    interval holds 1."""
    lines = [json.loads(l) for l in RECORDED.read_text().splitlines() if l.strip()]
    runs = [l for l in lines if l["kind"] == "run"]
    (tmp_path / "ledger.jsonl").write_text(RECORDED.read_text())
    report.write_report(tmp_path)
    text = (tmp_path / "report.md").read_text()
    section = text.split("## What each cipher costs")[1].split("## CPU")[0]
    header = next(l for l in section.splitlines() if l.startswith("| workload"))
    column = [c.strip() for c in header.strip("|").split("|")].index("AES/plain")
    checked = 0
    for w in sorted({r["workload"] for r in runs}):
        pairs = {}
        for r in runs:
            if r["workload"] == w and r["algorithm"] in ("aes", "plain"):
                pairs.setdefault((r["records"], r["repeat"]), {})[r["algorithm"]] = r["throughput"]
        ratios = sorted(p["aes"] / p["plain"] for p in pairs.values() if len(p) == 2)
        mid = len(ratios) // 2
        median = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
        row = next(l for l in section.splitlines() if l.startswith(f"| {w.upper()} |"))
        cell = [c.strip() for c in row.strip("|").split("|")][column]
        shown = float(cell.lstrip("≈ ").split(" ")[0])
        lo, hi = (float(x) for x in cell.split("[")[1].rstrip("]").split(","))
        assert shown == pytest.approx(median, abs=0.005), w
        assert lo <= shown <= hi
        if min(abs(lo - 1), abs(hi - 1)) > 0.005:   # the table rounds to 2 places
            assert cell.startswith("≈") == (lo <= 1.0 <= hi), w
        checked += 1
    assert checked == 6
    assert "NOT_FOUND" in text and "w:1" in text


def test_main_operation_rules():
    runs = [report.parse_line(run_line("rs3", "aes", 10_000, "e", 1))]
    assert report.main_operation("e", runs) == "SCAN"
    other = dict(run_line("rs3", "aes", 10_000, "messenger", 1))
    other["ops"] = {"INSERT": {"count": 5}, "READ": {"count": 50}, "UPDATE": {"count": 7}}
    assert report.main_operation("messenger", [report.parse_line(other)]) == "READ"
    assert report.main_operation("a", [report.parse_line(other)]) == "READ"


def test_ordering_puts_the_papers_order_first():
    assert ordered({"lea", "zzz", "3des", "plain", "aes", "abc"}, CANONICAL_ALGORITHMS) == [
        "plain", "aes", "3des", "lea", "abc", "zzz"]
    assert ordered({"messenger", "f", "a", "caching"}, CANONICAL_WORKLOADS) == [
        "a", "f", "caching", "messenger"]


def test_overhead_section_says_why_when_plain_is_missing(tmp_path):
    lines = [json.dumps(run_line("embedded", a, 10_000, "a", 1)) for a in ("direct", "aes")]
    (tmp_path / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    written = report.write_report(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "No `plain` runs" in text
    assert "Only one record count" in text and "Only one topology" in text
    assert not any(Path(p).name.startswith("ratios_") for p in written)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "deploy.bench.report", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_cli_exits_2_without_a_ledger(tmp_path):
    done = run_cli(str(tmp_path))
    assert done.returncode == 2
    assert "no ledger" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_cli_exits_2_without_run_lines(tmp_path):
    (tmp_path / "ledger.jsonl").write_text('{"kind": "load", "topology": "x"}\nnot json\n')
    done = run_cli(str(tmp_path))
    assert done.returncode == 2
    assert "no usable cell lines" in done.stderr


def test_no_overhead_figure_when_no_ratio_has_both_cells(tmp_path):
    # plain and aes never share a record count (an interrupted matrix): tables say so, no crash
    lines = [json.dumps(run_line("embedded", "plain", 10_000, "a", 1)),
             json.dumps(run_line("embedded", "aes", 30_000, "a", 1))]
    (tmp_path / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    written = report.write_report(tmp_path)
    assert not any(Path(p).name.startswith("ratios_") for p in written)
    assert (tmp_path / "report.md").stat().st_size > 0


def test_bars_are_medians_and_error_bars_span_min_to_max():
    """The drawn bar of each cell is its median; its error bar goes from the lowest to the highest repeat."""
    runs = [report.parse_line(dict(run_line("rs3", a, n, "a", rep), throughput=tp))
            for a, n, rep, tp in (("aes", 10_000, 1, 900.0), ("aes", 10_000, 2, 980.0),
                                  ("aes", 10_000, 3, 1000.0), ("aes", 30_000, 1, 800.0),
                                  ("aes", 30_000, 2, 850.0), ("plain", 10_000, 1, 1200.0))]
    spreads = report.throughput_spreads(runs)
    fig = plots.throughput_figure(spreads, "rs3", "a", ["plain", "aes"], [10_000, 30_000], ["plain", "aes"])
    try:
        bars = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
        spans = [tuple(sorted(float(y) for y in segment[:, 1]))
                 for c in bars for segment in c.errorbar.lines[2][0].get_segments()]
        heights = sorted(round(b.get_height(), 6) for c in bars for b in c)
    finally:
        plots.plt.close(fig)
    assert sorted(spans) == [(800.0, 850.0), (900.0, 1000.0), (1200.0, 1200.0)]
    assert heights == [825.0, 980.0, 1200.0]


def test_compare_says_whether_two_runs_agree(tmp_path):
    from . import compare
    lines = [run_line("embedded", a, n, w, r) for a in ALGORITHMS for n in RECORDS for w in WORKLOADS for r in (1, 2)]
    slower = [dict(l, throughput=l["throughput"] * (0.9 if l["algorithm"] == "aes" else 1.0)) for l in lines]
    for name, ledger in (("one", lines), ("two", lines), ("slower", slower)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ledger.jsonl").write_text("\n".join(json.dumps(l) for l in ledger) + "\n")
    text, agree = compare.compare(compare.load(tmp_path / "one"), compare.load(tmp_path / "two"), 0.05)
    assert agree and "| A | 0.88 [0.88, 0.88] | 0.88 [0.88, 0.88] | +0.00 |" in "\n".join(text)
    assert "Ordering holds in A, E." in "\n".join(text)
    text, agree = compare.compare(compare.load(tmp_path / "one"), compare.load(tmp_path / "slower"), 0.05)
    assert not agree and "-0.09 **over** **apart**" in "\n".join(text)
    assert "- Cells whose 95 % intervals do not overlap: 2" in "\n".join(text)
    assert "- AES/plain: median |difference| over workloads 0.088 (over ±0.05); largest 0.09; 2 of 2" in "\n".join(text)
    assert compare.main([str(tmp_path / "one"), str(tmp_path / "nothing")]) == 2


def test_compare_judges_a_cell_by_its_interval_not_the_median_tolerance(tmp_path):
    """A cell 0.06 apart whose repeats spread wider agrees (the report's interval is its spread);
    one whose intervals do not overlap does not, even with every median within the tolerance."""
    from . import compare
    def ledger(name, aes_factor):
        lines = [dict(line, throughput=line["throughput"] * (aes_factor(line["repeat"], line["workload"])
                                                           if line["algorithm"] == "aes" else 1.0))
                 for line in (run_line("embedded", a, n, w, r)
                              for a in ALGORITHMS for n in RECORDS for w in WORKLOADS for r in (1, 2, 3))]
        (tmp_path / name).mkdir()
        (tmp_path / name / "ledger.jsonl").write_text("\n".join(json.dumps(l) for l in lines) + "\n")
        return compare.load(tmp_path / name)
    spread = (0.90, 1.0, 1.10)
    wide = ledger("wide", lambda r, w: spread[r - 1])
    shifted = ledger("shifted", lambda r, w: spread[r - 1] * (1.07 if w == "a" else 1.0))
    text, agree = compare.compare(wide, shifted, 0.05)
    assert agree and "+0.06 **over**" in "\n".join(text) and "**apart**" not in "\n".join(text)
    text, agree = compare.compare(ledger("tight", lambda r, w: 1.0), ledger("narrow", lambda r, w: 1.03), 0.05)
    assert not agree and "+0.03 **apart**" in "\n".join(text)



def test_proxy_added_latency_is_reported_when_measured_and_absent_otherwise(tmp_path):
    lines = []
    for a in ("direct", "plain", "aes"):
        for repeat in (1, 2, 3):
            line = run_line("rs3", a, 10_000, "a", repeat)
            if a != "direct":
                line["proxy_added"] = {"p50_us": 40.0 + repeat + (20 if a == "aes" else 0),
                                       "p99_us": 300.0 + repeat, "mean_us": 60.0, "count": 1000}
            lines.append(json.dumps(line))
    (tmp_path / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    report.write_report(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "## What the proxy adds per request" in text
    assert "| A | 42.0 / 302 | 62.0 / 302 |" in text   # medians of the three repeats; direct has none
    with open(tmp_path / "results.csv", newline="") as handle:
        rows = {r["algorithm"] + r["repeat"]: r for r in csv.DictReader(handle)}
    assert rows["aes1"]["proxy_added_p50_us"] == "61.0" and rows["direct1"]["proxy_added_p99_us"] == ""


def test_a_ledger_without_proxy_added_latency_reports_without_the_section(results):
    directory, _ = results
    assert "## What the proxy adds per request" not in (directory / "report.md").read_text()


def test_why_a_ratio_moves_sets_the_cpu_sums_beside_the_measured_ratio(results):
    """T is plain's client + proxy + backend CPU per operation (40 + 300 + 50 or 51 here), Δ what
    the cipher adds to it (3DES: 40), T / (T + Δ) the ratio saturated cores would give."""
    directory, _ = results
    text = (directory / "report.md").read_text()
    section = text.split("## Why a ratio moves between runs", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("| A | 3DES |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "392" and cells[3] == "40.0", row   # medians over repeats: 391, 392 → 391.5
    r = 391.5 / 431.5
    assert cells[4] == f"{r:.2f}" and cells[6] == f"{0.1 * r * (1 - r):.3f}", row
