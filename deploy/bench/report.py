#!/usr/bin/env python3
"""Turn a benchmark matrix's ledger into results.csv, plots/ and report.md.

The matrix runner appends one JSON line per YCSB phase to DIR/ledger.jsonl; this module reads
it (skipping and counting lines it cannot place), averages the repeats of each cell
(topology, algorithm, record count, workload) and writes, into DIR:

- results.csv: one row per run line, for spreadsheets and re-analysis;
- plots/*.png and plots/*.svg: the figures that mirror the source paper's;
- report.md: the tables, set beside the paper's reported figures.

    python3 deploy/bench/report.py DIR

The runner can also `from report import write_report` and call `write_report(DIR)`.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on the machines that run the matrix
import matplotlib.pyplot as plt  # noqa: E402  (must follow the backend choice)

ALGORITHMS = ("direct", "plain", "aes", "aria", "3des", "seed", "lea")
BASELINES = ("direct", "plain")
ALGORITHM_LABELS = {"direct": "direct", "plain": "plain", "aes": "AES", "aria": "ARIA",
                    "3des": "3DES", "seed": "SEED", "lea": "LEA"}
WORKLOADS = ("a", "b", "c", "d", "e", "f", "caching", "messenger", "recommendation")
OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE")
OP_METRICS = ("count", "avg_us", "p95_us", "p99_us", "errors")
CSV_BASE = ("topology", "algorithm", "records", "workload", "repeat", "threads", "operations",
            "throughput")
MISSING = "–"

# The paper's findings (3-member replica set, 1M/3M/5M records; changes are 5M vs 1M).
PAPER_SIZE = {
    "a": "AES ≈ ARIA (no difference); 3DES -23 %",
    "b": "3DES -10 %",
    "c": "no meaningful difference between algorithms",
    "d": "AES ≈ ARIA; 3DES -29 %",
    "e": "3DES lowest but close; changes less with size",
    "f": "AES/ARIA -5 to -6 %; 3DES -10 % (1,391 ops/s at 5M vs ~1,500 at 1M)",
}
# The paper's 6-member vs 3-member replica set.
PAPER_TOPOLOGY = {
    "a": "-49 to -50 %",
    "b": "-47 to -49 %",
    "c": "only the replica-set drop",
    "d": "3DES -62 %",
    "f": "about -50 %",
}


class LedgerError(Exception):
    """The ledger is missing or holds nothing to report on; the CLI turns it into exit 2."""


@dataclass
class Ledger:
    """What the ledger held: usable run lines (in ledger order) and what was set aside."""
    runs: list[dict] = field(default_factory=list)
    loads: int = 0
    malformed: int = 0


# --------------------------------------------------------------------------- ordering, labels

def ordered(names, canonical) -> list[str]:
    """The paper's order first, then anything unknown alphabetically, so tables line up."""
    present = set(names)
    return [n for n in canonical if n in present] + sorted(present - set(canonical))


def label(algorithm: str) -> str:
    """How an algorithm is shown to a reader (cipher names upper-case, as in the paper)."""
    return ALGORITHM_LABELS.get(algorithm, algorithm)


def workload_label(workload: str) -> str:
    """YCSB's core workloads are 'A'..'F' in the paper; named ones keep their name."""
    return workload.upper() if len(workload) == 1 else workload


def short_count(n: int) -> str:
    """10000 -> '10k', 5000000 -> '5M': record counts short enough for axis ticks."""
    for divisor, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= divisor:
            return f"{n / divisor:g}{suffix}"
    return str(n)


def safe_name(text: str) -> str:
    """A free-form label (topology, workload) made safe to use in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def fmt_int(value) -> str:
    return MISSING if value is None else f"{value:,.0f}"


def fmt_ratio(value) -> str:
    return MISSING if value is None else f"{value:.2f}"


def fmt_pct(value) -> str:
    return MISSING if value is None else f"{value:+.1f}"


def fmt_ms(micros) -> str:
    return MISSING if micros is None else f"{micros / 1000:.2f}"


# --------------------------------------------------------------------------- reading

def _number(value) -> float:
    """A finite JSON number; bools are numbers to Python but never to a benchmark."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a number: {value!r}")
    return value


def _whole(value) -> int:
    number = _number(value)
    if number != int(number) or number < 0:
        raise ValueError(f"not a count: {value!r}")
    return int(number)


def _text(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a label: {value!r}")
    return value.strip()


def _optional(value, convert):
    """Optional fields stay None when absent or unusable rather than costing the whole line."""
    try:
        return None if value is None else convert(value)
    except ValueError:
        return None


def _workload(value) -> str:
    """'a', 'A' and 'workloada' all name YCSB's workload A."""
    name = _text(value).lower()
    return name[len("workload"):] if name.startswith("workload") and len(name) > 8 else name


def _operations(value) -> dict[str, dict]:
    """The per-operation block; metrics that are not numbers are treated as absent."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("ops is not an object")
    ops = {}
    for name, metrics in value.items():
        if not isinstance(metrics, dict):
            raise ValueError(f"ops.{name} is not an object")
        ops[str(name).upper()] = {m: _optional(metrics.get(m), _number) for m in OP_METRICS}
    return ops


def parse_run(obj: dict) -> dict:
    """A run line as the report uses it; raises ValueError/KeyError if it cannot fill a cell."""
    return {
        "topology": _text(obj["topology"]),
        "algorithm": _text(obj["algorithm"]).lower(),
        "records": _whole(obj["records"]),
        "workload": _workload(obj["workload"]),
        "repeat": _optional(obj.get("repeat"), _whole),
        "threads": _optional(obj.get("threads"), _whole),
        "operations": _optional(obj.get("operations"), _whole),
        "throughput": _number(obj["throughput"]),
        "ops": _operations(obj.get("ops")),
    }


def read_ledger(path: Path) -> Ledger:
    """Every usable line of the ledger; a line that is not JSON or lacks a cell's keys is
    counted as malformed so the report can say how much was dropped."""
    ledger = Ledger()
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                kind = obj.get("kind") if isinstance(obj, dict) else None
                if kind == "run":
                    ledger.runs.append(parse_run(obj))
                elif kind == "load":
                    ledger.loads += 1
                else:
                    raise ValueError(f"unknown kind {kind!r}")
            except (ValueError, KeyError, TypeError):
                ledger.malformed += 1
    return ledger


def read_matrix(dir_path: Path) -> tuple[dict, str | None]:
    """matrix.json's title, notes and params; a broken file is reported, never fatal."""
    path = dir_path / "matrix.json"
    if not path.exists():
        return {}, None
    try:
        matrix = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return {}, f"matrix.json could not be read ({err})."
    if not isinstance(matrix, dict):
        return {}, "matrix.json is not a JSON object; ignored."
    return matrix, None


# --------------------------------------------------------------------------- aggregation

def topologies_of(runs) -> list[str]:
    """Topologies in ledger order: the first one is the baseline of topology comparisons."""
    return list(dict.fromkeys(r["topology"] for r in runs))


def algorithms_of(runs) -> list[str]:
    return ordered({r["algorithm"] for r in runs}, ALGORITHMS)


def workloads_of(runs) -> list[str]:
    return ordered({r["workload"] for r in runs}, WORKLOADS)


def records_of(runs) -> list[int]:
    return sorted({r["records"] for r in runs})


def only(runs, **match) -> list[dict]:
    """The run lines whose fields equal every given value."""
    return [r for r in runs if all(r[k] == v for k, v in match.items())]


def throughput_cells(runs) -> dict[tuple, list[float]]:
    """Throughput of every repeat, keyed by (topology, algorithm, records, workload)."""
    cells = defaultdict(list)
    for r in runs:
        cells[(r["topology"], r["algorithm"], r["records"], r["workload"])].append(r["throughput"])
    return dict(cells)


def spread(values) -> dict | None:
    """Mean, min and max over repeats: the bar height and its error bar."""
    if not values:
        return None
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values),
            "n": len(values)}


def mean_of(cells, topology, algorithm, records, workload) -> float | None:
    stats = spread(cells.get((topology, algorithm, records, workload)))
    return stats["mean"] if stats else None


def error_extents(stats: dict) -> tuple[float, float]:
    """Matplotlib wants error bars as distances below and above the bar: to min and to max."""
    return stats["mean"] - stats["min"], stats["max"] - stats["mean"]


def ratio(value, base) -> float | None:
    if value is None or not base:
        return None
    return value / base


def pct_change(value, base) -> float | None:
    """The paper's measure: (x_size - x_smallest) / x_smallest * 100."""
    if value is None or not base:
        return None
    return (value - base) / base * 100


def operation_summary(runs, op: str) -> dict | None:
    """One operation over repeats: counts and errors summed, latencies averaged (mean over
    repeats of each repeat's avg/p95/p99, which is what YCSB reports per run)."""
    entries = [r["ops"][op] for r in runs if op in r["ops"]]
    if not entries:
        return None

    def mean(metric):
        values = [e[metric] for e in entries if e[metric] is not None]
        return statistics.fmean(values) if values else None

    def total(metric):
        values = [e[metric] for e in entries if e[metric] is not None]
        return sum(values) if values else None

    return {"count": total("count"), "avg_us": mean("avg_us"), "p95_us": mean("p95_us"),
            "p99_us": mean("p99_us"), "errors": total("errors")}


def main_operation(workload: str, runs) -> str | None:
    """The operation a workload is about: READ for a-d and f, SCAN for e, otherwise (or when
    that operation was not recorded) the one with the most operations."""
    counts = defaultdict(float)
    for r in runs:
        for op, metrics in r["ops"].items():
            counts[op] += metrics["count"] or 0
    if not counts:
        return None
    preferred = {"a": "READ", "b": "READ", "c": "READ", "d": "READ", "f": "READ",
                 "e": "SCAN"}.get(workload)
    if preferred in counts:
        return preferred
    return max(sorted(counts), key=lambda op: counts[op])


def overhead_series(cells, topology, algorithms, workloads, records) -> dict[tuple, dict]:
    """Ratios that separate the proxy's cost from the cipher's: plain/direct (the proxy
    alone) and each other algorithm / plain (the cipher alone), per (workload, records).
    Keyed by (algorithm, base) so figures can colour a series like its algorithm."""
    series = {}
    pairs = []
    if "plain" in algorithms and "direct" in algorithms:
        pairs.append(("plain", "direct"))
    if "plain" in algorithms:
        pairs += [(a, "plain") for a in algorithms if a not in BASELINES]
    for algo, base in pairs:
        series[(algo, base)] = {
            (w, n): ratio(mean_of(cells, topology, algo, n, w),
                          mean_of(cells, topology, base, n, w))
            for w in workloads for n in records}
    return series


def series_name(key: tuple) -> str:
    algo, base = key
    return f"{label(algo)}/{base}"


def overhead_gap(algorithms) -> str | None:
    """Why (part of) the overhead cannot be shown, in one line; None when nothing is missing."""
    if "plain" not in algorithms:
        return ("No `plain` runs (proxy without encryption), so neither the proxy's nor a "
                "cipher's share of the cost can be separated.")
    if "direct" not in algorithms:
        return "No `direct` runs (backend without proxy), so plain/direct is left out."
    if not [a for a in algorithms if a not in BASELINES]:
        return "No encrypted algorithm was run, so only plain/direct is shown."
    return None


# --------------------------------------------------------------------------- CSV

def operations_seen(runs) -> list[str]:
    return ordered({op for r in runs for op in r["ops"]}, OPERATIONS)


def write_csv(runs, path: Path) -> Path:
    """One row per run line, in ledger order; per-operation columns empty when absent."""
    ops = operations_seen(runs)
    header = list(CSV_BASE) + [f"{op}_{m}" for op in ops for m in OP_METRICS]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for r in runs:
            row = [r[k] for k in CSV_BASE]
            for op in ops:
                metrics = r["ops"].get(op, {})
                row += [metrics.get(m) for m in OP_METRICS]
            writer.writerow(["" if v is None else v for v in row])
    return path


# --------------------------------------------------------------------------- figures

def colour(name: str, names: list[str]):
    """The same algorithm (or topology) keeps the same colour in every figure."""
    return plt.get_cmap("tab10")(names.index(name) % 10)


def throughput_figure(cells, topology, workload, algorithms, records, palette):
    """Grouped bars: x = record count, one bar per algorithm, mean over repeats with a
    min-max error bar (the paper's Figs. 9-14)."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.0 + 0.35 * len(algorithms) * len(records)), 4.2))
    width = 0.8 / len(algorithms)
    for i, algo in enumerate(algorithms):
        xs, heights, below, above = [], [], [], []
        for j, n in enumerate(records):
            stats = spread(cells.get((topology, algo, n, workload)))
            if stats:
                lo, hi = error_extents(stats)
                xs.append(j - 0.4 + width * (i + 0.5))
                heights.append(stats["mean"])
                below.append(lo)
                above.append(hi)
        if xs:
            ax.bar(xs, heights, width, yerr=[below, above], capsize=3, label=label(algo),
                   color=colour(algo, palette))
    ax.set_xticks(range(len(records)), [f"{short_count(n)} records" for n in records])
    ax.set_ylabel("ops/s")
    ax.set_title(f"Workload {workload_label(workload)} on {topology}: throughput "
                 "(mean, error bar = min–max over repeats)")
    ax.legend(fontsize="small", ncols=min(len(algorithms), 7), loc="upper center",
              bbox_to_anchor=(0.5, -0.1), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def topology_figure(cells, workload, topologies, algorithms, records):
    """One panel per record count: for each algorithm, mean throughput per topology side by
    side (the paper's Figs. 15-20, 3 vs 6 replica-set members)."""
    fig, axes = plt.subplots(1, len(records), sharey=True, squeeze=False,
                             figsize=(max(6.0, 0.5 * len(algorithms) * len(records) + 2), 4.2))
    width = 0.8 / len(topologies)
    for ax, n in zip(axes[0], records):
        for i, topo in enumerate(topologies):
            xs, heights = [], []
            for j, algo in enumerate(algorithms):
                value = mean_of(cells, topo, algo, n, workload)
                if value is not None:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    heights.append(value)
            ax.bar(xs, heights, width, label=topo, color=colour(topo, topologies))
        ax.set_xticks(range(len(algorithms)), [label(a) for a in algorithms], rotation=45)
        ax.set_title(f"{short_count(n)} records", fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("ops/s")
    axes[0][0].legend(fontsize="small")
    fig.suptitle(f"Workload {workload_label(workload)}: mean throughput per topology")
    fig.tight_layout()
    return fig


def latency_points(runs, topology, workloads) -> dict[str, tuple]:
    """Per workload: (main operation, largest record count, {algorithm: summary}), the data of
    the latency figure; workloads without per-operation data are left out."""
    points = {}
    for w in workloads:
        cell_runs = only(runs, topology=topology, workload=w)
        if not cell_runs:
            continue
        largest = max(r["records"] for r in cell_runs)
        at_largest = only(cell_runs, records=largest)
        op = main_operation(w, at_largest)
        if op is None:
            continue
        summaries = {a: operation_summary(only(at_largest, algorithm=a), op)
                     for a in algorithms_of(at_largest)}
        points[w] = (op, largest, {a: s for a, s in summaries.items() if s})
    return points


def latency_figure(points, topology, palette):
    """p95 and p99 of each workload's main operation, per algorithm, at the largest size."""
    algorithms = ordered({a for _, _, s in points.values() for a in s}, palette)
    workloads = list(points)
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(
        min(14.0, max(6.0, 0.18 * len(workloads) * len(algorithms) + 3)), 6.0))
    width = 0.8 / max(1, len(algorithms))
    for ax, metric in zip(axes, ("p95_us", "p99_us")):
        for i, algo in enumerate(algorithms):
            xs, heights = [], []
            for j, w in enumerate(workloads):
                summary = points[w][2].get(algo)
                if summary and summary[metric] is not None:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    heights.append(summary[metric] / 1000)
            ax.bar(xs, heights, width, label=label(algo), color=colour(algo, palette))
        ax.set_ylabel(f"{metric[:3]} latency (ms)")
        ax.grid(axis="y", alpha=0.3)
    axes[1].set_xticks(range(len(workloads)),
                       [f"{workload_label(w)}: {op}\n{short_count(n)} records"
                        for w, (op, n, _) in points.items()])
    axes[0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[0].set_title(f"{topology}: p95 / p99 latency of each workload's main operation")
    fig.tight_layout()
    return fig


def overhead_figure(series, topology, workloads, records, palette):
    """One panel per workload: x = record count, one bar per ratio; the dashed line at 1 is
    'costs nothing'. Panels keep the figure readable with many workloads and sizes."""
    workloads = [w for w in workloads
                 if any(s.get((w, n)) is not None for s in series.values() for n in records)]
    ncols = min(3, len(workloads))
    nrows = math.ceil(len(workloads) / ncols)
    fig, axes = plt.subplots(nrows, ncols, sharey=True, squeeze=False, layout="constrained",
                             figsize=(1.0 + 4.2 * ncols, 1.0 + 3.0 * nrows))
    width = 0.8 / len(series)
    for ax, w in zip(axes.flat, workloads):
        for i, (key, values) in enumerate(series.items()):
            xs = [j - 0.4 + width * (i + 0.5) for j, n in enumerate(records)
                  if values.get((w, n)) is not None]
            heights = [values[(w, n)] for n in records if values.get((w, n)) is not None]
            ax.bar(xs, heights, width, label=series_name(key), color=colour(key[0], palette))
        ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(records)), [short_count(n) for n in records])
        ax.set_title(f"Workload {workload_label(w)}", fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.flat[len(workloads):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("throughput ratio")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(series), 7),
               fontsize="small", frameon=False)
    fig.suptitle(f"{topology}: proxy overhead (plain/direct) and cipher cost (x/plain)")
    return fig


def save_figure(fig, plots_dir: Path, basename: str) -> tuple[Path, Path]:
    """PNG for GitHub to show, SVG for papers; the figure is closed to free its memory."""
    png, svg = plots_dir / f"{basename}.png", plots_dir / f"{basename}.svg"
    fig.savefig(png, dpi=110, bbox_inches="tight")
    fig.savefig(svg, bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return png, svg


def write_plots(runs, cells, plots_dir: Path) -> list[tuple[str, Path, Path]]:
    """Every figure the ledger supports, as (caption, png, svg)."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    topologies = topologies_of(runs)
    palette = ordered(set(algorithms_of(runs)), ALGORITHMS)
    written = []

    def emit(caption, fig, basename):
        written.append((caption, *save_figure(fig, plots_dir, basename)))

    for topo in topologies:
        topo_runs = only(runs, topology=topo)
        for w in workloads_of(topo_runs):
            cell_runs = only(topo_runs, workload=w)
            emit(f"Throughput, workload {workload_label(w)}, {topo}",
                 throughput_figure(cells, topo, w, algorithms_of(cell_runs),
                                   records_of(cell_runs), palette),
                 f"throughput_{safe_name(topo)}_{safe_name(w)}")
    if len(topologies) > 1:
        for w in workloads_of(runs):
            w_runs = only(runs, workload=w)
            emit(f"Throughput per topology, workload {workload_label(w)}",
                 topology_figure(cells, w, [t for t in topologies if only(w_runs, topology=t)],
                                 algorithms_of(w_runs), records_of(w_runs)),
                 f"topology_{safe_name(w)}")
    for topo in topologies:
        topo_runs = only(runs, topology=topo)
        points = latency_points(runs, topo, workloads_of(topo_runs))
        if points:
            emit(f"Latency (p95/p99), {topo}", latency_figure(points, topo, palette),
                 f"latency_{safe_name(topo)}")
    for topo in topologies:
        topo_runs = only(runs, topology=topo)
        workloads, records = workloads_of(topo_runs), records_of(topo_runs)
        series = overhead_series(cells, topo, algorithms_of(topo_runs), workloads, records)
        # a ratio needs both of its cells at the same workload and record count
        if any(v is not None for s in series.values() for v in s.values()):
            emit(f"Overhead ratios, {topo}",
                 overhead_figure(series, topo, workloads, records, palette),
                 f"overhead_{safe_name(topo)}")
    return written


# --------------------------------------------------------------------------- markdown

def md_cell(value) -> str:
    """Table cells may hold free text from matrix.json; pipes and newlines would break rows."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def md_table(header, rows) -> list[str]:
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def md_intro(matrix, matrix_problem, ledger, generated) -> list[str]:
    """Title, time, what was read, params and notes."""
    lines = [f"# {matrix.get('title') or 'Benchmark report'}", "",
             f"Generated {generated} by `deploy/bench/report.py` from `ledger.jsonl`: "
             f"{len(ledger.runs)} run lines, {ledger.loads} load lines"
             + (f", {ledger.malformed} malformed line(s) ignored." if ledger.malformed
                else ", no malformed lines."), ""]
    if matrix_problem:
        lines += [matrix_problem, ""]
    params = matrix.get("params")
    if params is not None:
        lines += ["## Parameters", ""]
        items = params.items() if isinstance(params, dict) else [("value", params)]
        lines += md_table(["parameter", "value"],
                          [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in items])
    notes = matrix.get("notes")
    if notes:
        lines += ["## Notes", ""]
        lines += [f"- {n}" for n in (notes if isinstance(notes, list) else [notes])] + [""]
    return lines


def repeats_sentence(cells, topology) -> str:
    counts = sorted({len(v) for k, v in cells.items() if k[0] == topology})
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"Each cell is the mean throughput (ops/s) over {span} repeat(s)."


def md_headline(runs, cells) -> list[str]:
    """Per topology, one table per record count: rows = workload, columns = algorithm."""
    lines = ["## Throughput", ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        algorithms, workloads = algorithms_of(topo_runs), workloads_of(topo_runs)
        lines += [f"### {topo}", "", repeats_sentence(cells, topo), ""]
        for n in records_of(topo_runs):
            lines += [f"#### {n:,} records", ""]
            lines += md_table(["workload"] + [label(a) for a in algorithms],
                              [[workload_label(w)] + [fmt_int(mean_of(cells, topo, a, n, w))
                                              for a in algorithms] for w in workloads])
    return lines


def md_overhead(runs, cells) -> list[str]:
    """plain/direct and each cipher / plain, per workload x record count."""
    lines = ["## Proxy overhead", "",
             "Throughput ratios of the means: plain/direct is what the proxy alone keeps of the "
             "backend's throughput; x/plain is what each cipher keeps of the proxy's.", ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        algorithms, workloads, records = (algorithms_of(topo_runs), workloads_of(topo_runs),
                                          records_of(topo_runs))
        lines += [f"### {topo}", ""]
        gap = overhead_gap(algorithms)
        if gap:
            lines += [gap, ""]
        series = overhead_series(cells, topo, algorithms, workloads, records)
        if series:
            lines += md_table(["workload", "records"] + [series_name(k) for k in series],
                              [[workload_label(w), f"{n:,}"] + [fmt_ratio(s[(w, n)])
                                                        for s in series.values()]
                               for w in workloads for n in records])
    return lines


def md_latency(runs) -> list[str]:
    """avg/p95/p99 per workload x algorithm x operation at each workload's largest size."""
    lines = ["## Latency", "",
             "At the largest record count of each workload; avg, p95 and p99 are means over "
             "repeats, in ms; count and errors are summed over repeats.", ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        rows = []
        for w in workloads_of(topo_runs):
            w_runs = only(topo_runs, workload=w)
            largest = max(r["records"] for r in w_runs)
            at_largest = only(w_runs, records=largest)
            for a in algorithms_of(at_largest):
                a_runs = only(at_largest, algorithm=a)
                for op in operations_seen(a_runs):
                    s = operation_summary(a_runs, op)
                    rows.append([workload_label(w), f"{largest:,}", label(a), op,
                                 fmt_int(s["count"]),
                                 fmt_ms(s["avg_us"]), fmt_ms(s["p95_us"]), fmt_ms(s["p99_us"]),
                                 fmt_int(s["errors"])])
        lines += [f"### {topo}", ""]
        if rows:
            lines += md_table(["workload", "records", "algorithm", "operation", "count",
                               "avg ms", "p95 ms", "p99 ms", "errors"], rows)
        else:
            lines += ["No run line of this topology carries per-operation latencies (`ops`).",
                      ""]
    return lines


def scale_sentence(records: list[int]) -> str:
    """How our record counts relate to the paper's 1M / 3M / 5M."""
    counts = " / ".join(f"{n:,}" for n in records)
    steps = [n / records[0] for n in records]
    if len(steps) == 3 and all(math.isclose(a, b) for a, b in zip(steps, (1, 3, 5))):
        factor = 1_000_000 / records[0]
        scale = ("at the paper's own sizes" if math.isclose(factor, 1)
                 else f"at 1/{factor:g} of its sizes" if factor > 1
                 else f"at {1 / factor:g}× its sizes")
        return (f"Our record counts ({counts}) keep the paper's 1:3:5 ratio of 1M / 3M / 5M "
                f"records, {scale}; compare directions and rough sizes of the changes, not "
                "absolute ops/s. The last figure in each cell (largest vs smallest) is the one "
                "to set beside the paper's 5M-vs-1M figures.")
    ratio_text = ":".join(f"{s:g}" for s in steps)
    return (f"Our record counts ({counts}) stand in the ratio {ratio_text}; the paper used "
            "1M / 3M / 5M (1:3:5). The last figure in each cell (largest vs smallest) is the "
            "closest to the paper's 5M-vs-1M figures.")


def size_change_rows(cells, topology, workloads, algorithms, records) -> list[list[str]]:
    """Per workload, each algorithm's % change at each larger size vs the smallest."""
    rows = []
    for w in workloads:
        row = [workload_label(w)]
        for a in algorithms:
            base = mean_of(cells, topology, a, records[0], w)
            row.append(" / ".join(fmt_pct(pct_change(mean_of(cells, topology, a, n, w), base))
                                  for n in records[1:]))
        rows.append(row + [PAPER_SIZE.get(w, MISSING)])
    return rows


def topology_change_rows(cells, base, other, workloads, algorithms, records) -> list[list[str]]:
    """Per workload, each algorithm's % change from the base topology, at each size."""
    rows = []
    for w in workloads:
        row = [workload_label(w)]
        for a in algorithms:
            row.append(" / ".join(fmt_pct(pct_change(mean_of(cells, other, a, n, w),
                                                     mean_of(cells, base, a, n, w)))
                                  for n in records))
        rows.append(row + [PAPER_TOPOLOGY.get(w, MISSING)])
    return rows


def md_paper(runs, cells) -> list[str]:
    """Our changes with size and with topology, next to what the paper reported."""
    lines = ["## Beside the paper", "",
             "The paper's size figures come from a 3-member replica set with 1M / 3M / 5M "
             "records, each a 5M-vs-1M change computed as (x_size - x_smallest) / x_smallest "
             "× 100. The same arithmetic is used here, per topology.", ""]
    all_records = records_of(runs)
    if len(all_records) > 1:
        lines += [scale_sentence(all_records), ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        records = records_of(topo_runs)
        lines += [f"### Change with record count, {topo}", ""]
        if len(records) < 2:
            lines += [f"Only one record count ({records[0]:,}), so there is no change with "
                      "size to compare.", ""]
            continue
        algorithms = algorithms_of(topo_runs)
        lines += [f"Cells: % change at {' / '.join(f'{n:,}' for n in records[1:])} records vs "
                  f"{records[0]:,}.", ""]
        lines += md_table(["workload"] + [label(a) for a in algorithms] + ["paper (5M vs 1M)"],
                          size_change_rows(cells, topo, workloads_of(topo_runs), algorithms,
                                           records))
    topologies = topologies_of(runs)
    lines += ["### Change with topology", ""]
    if len(topologies) < 2:
        lines += [f"Only one topology ({topologies[0]}), so there is no topology change to set "
                  "beside the paper's 6-vs-3-member figures.", ""]
        return lines
    base = topologies[0]
    lines += [f"The paper compares 6 with 3 replica-set members; here each topology is set "
              f"against the first in the ledger, {base}.", ""]
    for other in topologies[1:]:
        both = only(runs, topology=base) + only(runs, topology=other)
        records = records_of(both)
        lines += [f"#### {other} vs {base}", "",
                  f"Cells: % change at {' / '.join(f'{n:,}' for n in records)} records.", ""]
        algorithms = algorithms_of(both)
        lines += md_table(["workload"] + [label(a) for a in algorithms] + ["paper (6 vs 3)"],
                          topology_change_rows(cells, base, other, workloads_of(both),
                                               algorithms, records))
    return lines


def md_figures(plots, dir_path: Path, topologies) -> list[str]:
    lines = ["## Figures", ""]
    if len(topologies) < 2:
        lines += ["Only one topology, so there are no topology comparison figures.", ""]
    for caption, png, svg in plots:
        lines.append(f"- {caption} ([svg]({svg.relative_to(dir_path).as_posix()}))  ")
        lines.append(f"  ![{caption}]({png.relative_to(dir_path).as_posix()})")
    return lines + [""]


# --------------------------------------------------------------------------- entry points

def write_report(dir_path) -> list[str]:
    """Read DIR/ledger.jsonl (and matrix.json), write results.csv, plots/ and report.md into
    DIR, and return the paths written. Raises LedgerError when there is nothing to report."""
    dir_path = Path(dir_path)
    ledger_path = dir_path / "ledger.jsonl"
    if not ledger_path.is_file():
        raise LedgerError(f"no ledger at {ledger_path}")
    ledger = read_ledger(ledger_path)
    if not ledger.runs:
        raise LedgerError(f"{ledger_path} holds no usable run lines")
    matrix, matrix_problem = read_matrix(dir_path)
    cells = throughput_cells(ledger.runs)

    csv_path = write_csv(ledger.runs, dir_path / "results.csv")
    plots = write_plots(ledger.runs, cells, dir_path / "plots")
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = (md_intro(matrix, matrix_problem, ledger, generated)
             + md_headline(ledger.runs, cells)
             + md_overhead(ledger.runs, cells)
             + md_latency(ledger.runs)
             + md_paper(ledger.runs, cells)
             + md_figures(plots, dir_path, topologies_of(ledger.runs)))
    report_path = dir_path / "report.md"
    report_path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return [str(csv_path)] + [str(p) for _, png, svg in plots for p in (png, svg)] + \
        [str(report_path)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Write results.csv, plots/ and report.md from DIR/ledger.jsonl.")
    parser.add_argument("dir", help="results directory holding ledger.jsonl (and matrix.json)")
    args = parser.parse_args(argv)
    try:
        written = write_report(args.dir)
    except LedgerError as err:
        print(f"report: {err}", file=sys.stderr)
        return 2
    print(f"report: wrote {len(written)} files, see {written[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
