#!/usr/bin/env python3
"""Turn a benchmark matrix's ledger into results.csv, plots/ and report.md.

The matrix runner appends one JSON line per load and per cell to DIR/ledger.jsonl; this module
reads it (skipping and counting lines it cannot place) and writes, into DIR:

- results.csv: one row per cell line, for spreadsheets and re-analysis;
- plots/*.png and plots/*.svg: the figures that mirror the source paper's, and the proxy's CPU;
- report.md: the tables, with the spread of every figure and an interval for every ratio
  (stats.py says how), set beside the paper's reported figures.

    python3 -m deploy.bench.report DIR        (from the repository's root)

The runner calls `write_report(DIR)` itself at the end of a matrix.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from . import markdown, names, plots, stats
from .markdown import MISSING, median_range, table
from .names import BASELINES, label, ordered, workload_label

OP_METRICS = ("count", "avg_us", "p95_us", "p99_us", "errors", "not_found")
CPU_PROCESSES = ("proxy", "backend", "client")
CSV_BASE = ("topology", "algorithm", "records", "workload", "repeat", "threads", "operations", "seconds",
            "throughput", "write_concern", "data", "errors", "not_found") + tuple(
    f"{p}_cpu_us_per_op" for p in CPU_PROCESSES)
PROXY_ADDED = ("p50_us", "p99_us", "mean_us")   # what the proxy adds per request (its /metrics histogram)
NOISE = "≈"   # marks a ratio or a change that the run cannot tell from none

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
    """What the ledger held: usable cell and load lines (in ledger order) and what was set aside."""
    runs: list[dict] = field(default_factory=list)
    loads: list[dict] = field(default_factory=list)
    malformed: int = 0


# --------------------------------------------------------------------------- formatting

def fmt_int(value) -> str:
    return MISSING if value is None else f"{value:,.0f}"


def fmt_ratio(value) -> str:
    return MISSING if value is None else f"{value:.2f}"


def fmt_pct(value) -> str:
    return MISSING if value is None else f"{value:+.1f}"


def fmt_us(value) -> str:
    return MISSING if value is None else (f"{value:,.0f}" if value >= 100 else f"{value:.1f}")


def fmt_ms(micros) -> str:
    return MISSING if micros is None else f"{micros / 1000:.2f}"


def fmt_interval(r: dict | None) -> str:
    """'0.93 [0.90, 0.95]', prefixed ≈ when the interval holds 1.0."""
    if not r:
        return MISSING
    text = f"{r['median']:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]"
    return f"{NOISE} {text}" if r["within_noise"] else text


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


def _cpu(value) -> dict[str, float]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in ((k, _optional(v, _number)) for k, v in value.items()) if v is not None}


def _proxy_added(value) -> dict:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in ((k, _optional(value.get(k), _number)) for k in PROXY_ADDED) if v is not None}


def parse_line(obj: dict) -> dict:
    """A cell or load line as the report uses it; raises ValueError/KeyError if it cannot fill a cell."""
    ops = _operations(obj.get("ops"))
    line = {
        "topology": _text(obj["topology"]),
        "algorithm": _text(obj["algorithm"]).lower(),
        "records": _whole(obj["records"]),
        "repeat": _optional(obj.get("repeat"), _whole),
        "threads": _optional(obj.get("threads"), _whole),
        "operations": _optional(obj.get("operations"), _whole),
        "seconds": _optional(obj.get("seconds"), _number),
        "throughput": _number(obj["throughput"]),
        "ops": ops,
        "write_concern": obj.get("write_concern") if isinstance(obj.get("write_concern"), str) else None,
        "data": obj.get("data") if isinstance(obj.get("data"), str) else None,
        "errors": _optional(obj.get("errors"), _whole),
        "not_found": _optional(obj.get("not_found"), _whole),
        "cpu": _cpu(obj.get("cpu_us_per_op")),
        "proxy_added": _proxy_added(obj.get("proxy_added")),
    }
    for key in ("errors", "not_found"):   # older lines: from the per-operation counts
        if line[key] is None:
            line[key] = sum(int(o.get(key) or 0) for o in ops.values())
    if obj.get("kind") == "run":
        line["workload"] = _workload(obj["workload"])
    return line


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
                    ledger.runs.append(parse_line(obj))
                elif kind == "load":
                    ledger.loads.append(parse_line(obj))
                else:
                    raise ValueError(f"unknown kind {kind!r}")
            except (ValueError, KeyError, TypeError, AttributeError):
                ledger.malformed += 1
    return ledger


def read_matrix(dir_path: Path) -> tuple[dict, str | None]:
    """matrix.json's title, notes and parameters; a broken file is reported, never fatal."""
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
    return ordered({r["algorithm"] for r in runs}, names.ALGORITHMS)


def workloads_of(runs) -> list[str]:
    return ordered({r["workload"] for r in runs}, names.WORKLOADS)


def records_of(runs) -> list[int]:
    return sorted({r["records"] for r in runs})


def only(runs, **match) -> list[dict]:
    """The lines whose fields equal every given value."""
    return [r for r in runs if all(r[k] == v for k, v in match.items())]


def by_repeat(runs, value) -> dict[tuple, dict]:
    """{(topology, algorithm, records, workload): {(records, repeat): value(run)}}: each repeat
    keyed so that a ratio can pair it with the same repeat of its baseline."""
    cells = defaultdict(dict)
    for i, r in enumerate(runs):
        v = value(r)
        if v is not None:
            repeat = r["repeat"] if r["repeat"] is not None else -i
            cells[(r["topology"], r["algorithm"], r["records"], r["workload"])][(r["records"], repeat)] = v
    return dict(cells)


def throughput_spreads(runs) -> dict[tuple, dict]:
    return {k: stats.spread(v.values()) for k, v in by_repeat(runs, lambda r: r["throughput"]).items()}


def ratio_pairs(runs) -> list[tuple]:
    """Which ratios the ledger supports: plain/direct (the proxy alone) and each other algorithm
    over plain (the cipher alone)."""
    algorithms = algorithms_of(runs)
    pairs = [("plain", "direct")] if {"plain", "direct"} <= set(algorithms) else []
    if "plain" in algorithms:
        pairs += [(a, "plain") for a in algorithms if a not in BASELINES]
    return pairs


def ratios(runs, per_records=False) -> dict[tuple, dict]:
    """{(topology, workload[, records], algorithm, base): ratio_summary}: x/base of throughput,
    paired by repeat (and record count), pooled over record counts unless per_records."""
    cells = by_repeat(runs, lambda r: r["throughput"])
    out = {}
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        for w in workloads_of(topo_runs):
            for n in (records_of(topo_runs) if per_records else [None]):
                for algo, base in ratio_pairs(topo_runs):
                    def pooled(a):
                        merged = {}
                        for m in records_of(topo_runs):
                            if n is None or m == n:
                                merged.update(cells.get((topo, a, m, w), {}))
                        return merged
                    summary = stats.ratio_summary(stats.paired_ratios(pooled(algo), pooled(base)))
                    if summary:
                        key = (topo, w) + ((n,) if per_records else ()) + (algo, base)
                        out[key] = summary
    return out


def cpu_spreads(runs, process: str) -> dict[tuple, dict]:
    """{(topology, algorithm, workload): spread of the process's µs of CPU per operation} over
    record counts and repeats."""
    values = defaultdict(list)
    for r in runs:
        if process in r["cpu"]:
            values[(r["topology"], r["algorithm"], r["workload"])].append(r["cpu"][process])
    return {k: stats.spread(v) for k, v in values.items()}


def cpu_ordering(cpu: dict, topology: str, workloads, algorithms) -> tuple[list[str], list[str]]:
    """Workloads where the medians of proxy CPU per operation rise in the order plain < AES <
    ARIA < 3DES (of those measured), and the workloads where they do not."""
    chain = [a for a in names.CPU_ORDER if a in algorithms]
    holds, breaks = [], []
    for w in workloads:
        medians = [cpu.get((topology, a, w)) for a in chain]
        if len(chain) < 2 or any(m is None for m in medians):
            continue
        ok = all(x["median"] < y["median"] for x, y in zip(medians, medians[1:]))
        (holds if ok else breaks).append(w)
    return holds, breaks


def pct_change(value, base) -> float | None:
    """The paper's measure: (x_size - x_smallest) / x_smallest * 100."""
    if value is None or not base:
        return None
    return (value - base) / base * 100


def operation_summary(runs, op: str) -> dict | None:
    """One operation over repeats: counts, NOT_FOUND and errors summed; avg/p95/p99 as the
    spread of what each repeat's YCSB reported."""
    entries = [r["ops"][op] for r in runs if op in r["ops"]]
    if not entries:
        return None

    def total(metric):
        values = [e[metric] for e in entries if e.get(metric) is not None]
        return sum(values) if values else None

    return {"count": total("count"), "errors": total("errors"), "not_found": total("not_found"),
            **{m: stats.spread([e.get(m) for e in entries]) for m in ("avg_us", "p95_us", "p99_us")}}


def main_operation(workload: str, runs) -> str | None:
    """The operation a workload is about: READ for a-d and f, SCAN for e, otherwise (or when
    that operation was not recorded) the one with the most operations."""
    counts = defaultdict(float)
    for r in runs:
        for op, metrics in r["ops"].items():
            counts[op] += metrics["count"] or 0
    if not counts:
        return None
    preferred = {"a": "READ", "b": "READ", "c": "READ", "d": "READ", "f": "READ", "e": "SCAN"}.get(workload)
    if preferred in counts:
        return preferred
    return max(sorted(counts), key=lambda op: counts[op])


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
    return ordered({op for r in runs for op in r["ops"]}, names.OPERATIONS)


def write_csv(runs, path: Path) -> Path:
    """One row per cell line, in ledger order; per-operation columns empty when absent."""
    ops = operations_seen(runs)
    header = list(CSV_BASE) + [f"proxy_added_{k}" for k in PROXY_ADDED] + [f"{op}_{m}" for op in ops for m in OP_METRICS]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for r in runs:
            row = [r[k] for k in CSV_BASE[:-len(CPU_PROCESSES)]] + [r["cpu"].get(p) for p in CPU_PROCESSES]
            row += [r.get("proxy_added", {}).get(k) for k in PROXY_ADDED]
            for op in ops:
                metrics = r["ops"].get(op, {})
                row += [metrics.get(m) for m in OP_METRICS]
            writer.writerow(["" if v is None else v for v in row])
    return path


# --------------------------------------------------------------------------- figures

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
        summaries = {a: operation_summary(only(at_largest, algorithm=a), op) for a in algorithms_of(at_largest)}
        points[w] = (op, largest, {a: s for a, s in summaries.items() if s})
    return points


def write_plots(runs, plots_dir: Path) -> list[tuple[str, Path, Path]]:
    """Every figure the ledger supports, as (caption, png, svg)."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    topologies = topologies_of(runs)
    palette = ordered(set(algorithms_of(runs)), names.ALGORITHMS)
    spreads = throughput_spreads(runs)
    pooled = ratios(runs)
    written = []

    def emit(caption, fig, basename):
        written.append((caption, *plots.save(fig, plots_dir, basename)))

    for topo in topologies:
        topo_runs = only(runs, topology=topo)
        workloads, algorithms = workloads_of(topo_runs), algorithms_of(topo_runs)
        series = ratio_pairs(topo_runs)
        if any((topo, w) + s in pooled for w in workloads for s in series):
            emit(f"Throughput ratios with 95 % intervals, {topo}",
                 plots.ratio_figure(pooled, topo, workloads, series, palette), f"ratios_{names.safe_name(topo)}")
        for process in ("proxy", "backend"):
            cpu = cpu_spreads(topo_runs, process)
            measured = [a for a in algorithms if any((topo, a, w) in cpu for w in workloads)]
            if measured:
                emit(f"µs of {process} CPU per operation, by algorithm and workload, {topo}",
                     plots.cpu_figure(cpu, topo, workloads, measured, palette, process),
                     f"cpu_{process}_{names.safe_name(topo)}")
        for w in workloads:
            cell_runs = only(topo_runs, workload=w)
            emit(f"Throughput, workload {workload_label(w)}, {topo}",
                 plots.throughput_figure(spreads, topo, w, algorithms_of(cell_runs), records_of(cell_runs), palette),
                 f"throughput_{names.safe_name(topo)}_{names.safe_name(w)}")
        points = latency_points(runs, topo, workloads)
        if points:
            emit(f"Latency (p95/p99), {topo}", plots.latency_figure(points, topo, palette),
                 f"latency_{names.safe_name(topo)}")
    if len(topologies) > 1:
        for w in workloads_of(runs):
            w_runs = only(runs, workload=w)
            emit(f"Throughput per topology, workload {workload_label(w)}",
                 plots.topology_figure(spreads, w, [t for t in topologies if only(w_runs, topology=t)],
                                       algorithms_of(w_runs), records_of(w_runs)),
                 f"topology_{names.safe_name(w)}")
    return written


# --------------------------------------------------------------------------- markdown

def md_intro(matrix, matrix_problem, ledger, generated) -> list[str]:
    """Title, time, what was read, parameters per topology and notes."""
    lines = [f"# {matrix.get('title') or 'Benchmark report'}", "",
             f"Generated {generated} by `deploy/bench/report.py` from `ledger.jsonl`: "
             f"{len(ledger.runs)} cell lines, {len(ledger.loads)} load lines"
             + (f", {ledger.malformed} malformed line(s) ignored." if ledger.malformed
                else ", no malformed lines."), ""]
    if matrix_problem:
        lines += [matrix_problem, ""]
    per_topology = matrix.get("topologies")
    if not isinstance(per_topology, dict) and matrix.get("params") is not None:
        per_topology = {"all": matrix["params"]}   # matrix.json of older runners
    if isinstance(per_topology, dict) and per_topology:
        lines += ["## Parameters", ""]
        keys = list(dict.fromkeys(k for p in per_topology.values() if isinstance(p, dict) for k in p))
        if keys:
            lines += table(["parameter"] + list(per_topology),
                           [[k] + [_param(p.get(k) if isinstance(p, dict) else None) for p in per_topology.values()]
                            for k in keys])
    write_concerns = sorted({r["write_concern"] or "not recorded" for r in ledger.runs})
    lines += [f"Write concern of the cells, as the binding set it: {', '.join(write_concerns)}.", ""]
    notes = matrix.get("notes")
    if notes:
        lines += ["## Notes", ""]
        lines += [f"- {n}" for n in (notes if isinstance(notes, list) else [notes])] + [""]
    return lines


def _param(value) -> str:
    return MISSING if value is None else value if isinstance(value, str) else json.dumps(value)


HOW_TO_READ = [
    "## How to read these figures", "",
    "- A throughput or latency is the **median over repeats**, followed by the lowest and highest "
    "repeat in parentheses: `3,120 (2,980–3,300)`.",
    "- Repeats are interleaved: each repeat runs every algorithm once, in an order rotated from "
    "repeat to repeat, so a ratio is taken between the **same repeat** of two algorithms (with "
    "`interleave: slice` they were measured in the same window, taking turns in short slices; "
    "with `cell` or `session`, one after the other). `0.93 [0.90, 0.95]` is the median of those "
    "paired ratios and its 95 % percentile-bootstrap interval (resampling the pairs). The interval "
    "is the spread this report states for the ratio: another run of the same matrix agrees with it "
    "when the two intervals overlap (`python -m deploy.bench.compare RUN1 RUN2` checks every ratio, "
    "and the median difference per cipher against ±0.05). Within one run the algorithms were "
    "measured alike; between runs, a change in what everything but the cipher costs moves every "
    "ratio too (\"Why a ratio moves between runs\").",
    f"- `{NOISE}` marks a ratio whose interval holds 1.0, or a change whose repeats overlap: this run "
    "cannot tell it from no difference. Hatched bars in the figures mean the same.",
    "- CPU per operation is utime + stime of a process (from `/proc/PID/stat`) over a cell's measured "
    "window divided by the operations done in it. On a shared machine it moves far less than "
    "throughput, so it is the figure to rank algorithms by.", ""]


def md_answer(runs, pooled) -> list[str]:
    """The question the lab exists for: what each cipher keeps of the throughput, per workload."""
    lines = ["## What each cipher costs, per workload", "",
             "Throughput ratios pooled over record counts (paired repeats): plain/direct is what the "
             "proxy without encryption keeps of the backend's throughput; x/plain is what each cipher "
             "keeps of the proxy's.", ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        lines += [f"### {topo}", ""]
        gap = overhead_gap(algorithms_of(topo_runs))
        if gap:
            lines += [gap, ""]
        series = ratio_pairs(topo_runs)
        if series:
            lines += table(["workload"] + [names.series_name(s) for s in series],
                           [[workload_label(w)] + [fmt_interval(pooled.get((topo, w) + s)) for s in series]
                            for w in workloads_of(topo_runs)])
    return lines


def md_cpu(runs) -> list[str]:
    """µs of CPU per operation of the proxy (and backend, client), by algorithm and workload."""
    lines = ["## CPU per operation", "",
             "µs of CPU time per operation, median over record counts and repeats (min–max).", ""]
    any_rows = False
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        algorithms, workloads = algorithms_of(topo_runs), workloads_of(topo_runs)
        for process in CPU_PROCESSES:
            cpu = cpu_spreads(topo_runs, process)
            measured = [a for a in algorithms if any((topo, a, w) in cpu for w in workloads)]
            if not measured:
                continue
            any_rows = True
            lines += [f"### {process}, {topo}", ""]
            lines += table(["workload"] + [label(a) for a in measured],
                           [[workload_label(w)] + [median_range(cpu.get((topo, a, w)), fmt_us) for a in measured]
                            for w in workloads])
            if process == "proxy":
                holds, breaks = cpu_ordering(cpu, topo, workloads, measured)
                chain = " < ".join(label(a) for a in names.CPU_ORDER if a in measured)
                if holds or breaks:
                    lines += [f"Ordering {chain} of the medians holds in workload(s) "
                              f"{', '.join(map(workload_label, holds)) or 'none'}"
                              + (f"; it does not in {', '.join(map(workload_label, breaks))}." if breaks else "."), ""]
    if not any_rows:
        lines += ["No cell line carries CPU figures: the runner was given no `--proxy-pid` or `--backend-pid` "
                  "(on a real cluster the proxy and mongod run in other containers or machines).", ""]
    return lines


def cpu_sums(runs) -> dict[tuple, dict]:
    """{(topology, algorithm, records, workload): {(records, repeat): µs of CPU per operation of
    client + proxy + backend}}, for the cells that measured all three."""
    return by_repeat(runs, lambda r: sum(r["cpu"][p] for p in CPU_PROCESSES)
                     if all(p in r["cpu"] for p in CPU_PROCESSES) else None)


def md_why_ratios(runs, measured) -> list[str]:
    """Why an x/plain ratio moves between runs: on saturated cores it is the ratio of what an
    operation costs every process, so it moves with the cost of everything but the cipher.
    `measured`: the pooled ratios md_answer reports (ratios(runs), bootstrapped once)."""
    sums = cpu_sums(runs)
    rows_by_topo = {}
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        rows = []
        for w in workloads_of(topo_runs):
            for algo, base in ratio_pairs(topo_runs):
                if base != "plain":
                    continue
                rest, added, predicted = [], [], []
                for n in records_of(topo_runs):
                    x, p = sums.get((topo, algo, n, w), {}), sums.get((topo, "plain", n, w), {})
                    for k in sorted(set(x) & set(p)):
                        rest.append(p[k])
                        added.append(x[k] - p[k])
                        predicted.append(p[k] / x[k])
                m = measured.get((topo, w, algo, base))
                if not predicted or not m:
                    continue
                r = statistics.median(predicted)
                rows.append([workload_label(w), label(algo), fmt_us(statistics.median(rest)),
                             fmt_us(statistics.median(added)), fmt_ratio(r), fmt_ratio(m["median"]),
                             f"{0.1 * r * (1 - r):.3f}"])
        if rows:
            rows_by_topo[topo] = rows
    if not rows_by_topo:
        return []
    lines = ["## Why a ratio moves between runs", "",
             "Here the cores are saturated, so throughput is the cores' time divided by what one operation costs "
             "every process (client, proxy and backend, µs of CPU from /proc), and x/plain should be plain's sum over "
             "x's: T / (T + Δ), T what everything but the cipher costs (plain's sum), Δ what the cipher adds. The "
             "table sets that beside the measured ratio (medians over paired repeats). Δ is the stable figure of a "
             "cipher; the ratio also moves with T: when the proxy, the client or the backend gets cheaper, or a "
             "machine runs them faster than it runs the cipher, every x/plain falls, and most where the cipher adds "
             "most. A change of 10 % in T moves a ratio r by about 0.1 · r · (1 − r) (last column): 3DES's "
             "ratio, with the largest Δ, moves most between runs whose T differs (docs/benchmarks.md, \"Why 3DES/plain "
             "moves\").", ""]
    for topo, rows in rows_by_topo.items():
        lines += [f"### {topo}", ""]
        lines += table(["workload", "cipher", "T: plain's µs per operation, all processes", "Δ: the cipher adds, µs",
                        "T / (T + Δ)", "x/plain measured", "moves per 10 % of T"], rows)
    return lines


def md_proxy_added(runs) -> list[str]:
    """p50 and p99 of what the proxy adds per request, by algorithm and workload (when measured)."""
    if not any(r.get("proxy_added") for r in runs):
        return []
    lines = ["## What the proxy adds per request", "",
             "The proxy's own time per request, from its `/metrics` (`fleproxy_proxy_duration_seconds`, read before "
             "and after each cell's window): reading the request to forwarding it, plus reading the reply to writing "
             "it — parsing, rewriting, encryption, decryption, any wait for keys; the upstream's time is not in it. "
             "p50 / p99 in µs, each the median over record counts and repeats (bucket bounds 1, 2, 5, 10, 25, 50, 75, "
             "100, 150, 200, 300, 500, 750 µs, 1 ms…: values are interpolated inside a bucket). *plain* is the proxy "
             "without a policy for the collection; direct bypasses the proxy.", ""]
    for topo in topologies_of(runs):
        topo_runs = [r for r in only(runs, topology=topo) if r.get("proxy_added")]
        if not topo_runs:
            continue
        algorithms, workloads = algorithms_of(topo_runs), workloads_of(topo_runs)
        rows = []
        for w in workloads:
            row = [workload_label(w)]
            for a in algorithms:
                cells = [r["proxy_added"] for r in topo_runs if r["algorithm"] == a and r["workload"] == w]
                p50 = stats.spread([c["p50_us"] for c in cells if "p50_us" in c])
                p99 = stats.spread([c["p99_us"] for c in cells if "p99_us" in c])
                row.append(f"{fmt_us(p50['median']) if p50 else MISSING} / {fmt_us(p99['median']) if p99 else MISSING}")
            rows.append(row)
        lines += [f"### {topo}", ""] + table(["workload"] + [label(a) for a in algorithms], rows)
    return lines


def md_throughput(runs) -> list[str]:
    """Per topology, one table per record count: rows = workload, columns = algorithm."""
    spreads = throughput_spreads(runs)
    lines = ["## Throughput", ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        algorithms, workloads = algorithms_of(topo_runs), workloads_of(topo_runs)
        counts = sorted({s["n"] for k, s in spreads.items() if k[0] == topo})
        span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        lines += [f"### {topo}", "", f"ops/s, median over {span} repeat(s) (min–max).", ""]
        for n in records_of(topo_runs):
            lines += [f"#### {n:,} records", ""]
            lines += table(["workload"] + [label(a) for a in algorithms],
                           [[workload_label(w)] + [median_range(spreads.get((topo, a, n, w)), fmt_int)
                                                   for a in algorithms] for w in workloads])
    return lines


def md_ratios_per_records(runs) -> list[str]:
    per = ratios(runs, per_records=True)
    lines = ["## Ratios per record count", "",
             "As above, per record count: the median of the paired repeats and its interval (with two "
             "repeats the interval is their range).", ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        series = ratio_pairs(topo_runs)
        if not series:
            continue
        lines += [f"### {topo}", ""]
        lines += table(["workload", "records"] + [names.series_name(s) for s in series],
                       [[workload_label(w), f"{n:,}"] + [fmt_interval(per.get((topo, w, n) + s)) for s in series]
                        for w in workloads_of(topo_runs) for n in records_of(topo_runs)])
    return lines


def md_latency(runs) -> list[str]:
    """avg/p95/p99 per workload x algorithm x operation at each workload's largest size."""
    lines = ["## Latency", "",
             "At the largest record count of each workload, in ms: median over repeats (min–max) of what "
             "YCSB reported per repeat; count, NOT_FOUND and errors summed over repeats.", ""]
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
                    rows.append([workload_label(w), f"{largest:,}", label(a), op, fmt_int(s["count"]),
                                 median_range(s["avg_us"], fmt_ms), median_range(s["p95_us"], fmt_ms),
                                 median_range(s["p99_us"], fmt_ms), fmt_int(s["not_found"]), fmt_int(s["errors"])])
        lines += [f"### {topo}", ""]
        if rows:
            lines += table(["workload", "records", "algorithm", "operation", "count", "avg ms", "p95 ms",
                            "p99 ms", "NOT_FOUND", "errors"], rows)
        else:
            lines += ["No cell line of this topology carries per-operation latencies (`ops`).", ""]
    return lines


def md_loads(loads) -> list[str]:
    if not loads:
        return []
    lines = ["## Loads", "",
             "Inserts per second while loading each algorithm's collection (batches), median over repeats "
             "(min–max), and the proxy's µs of CPU per inserted record.", ""]
    groups = defaultdict(list)
    for line in loads:
        groups[(line["topology"], line["records"], line["algorithm"])].append(line)
    rows = []
    rank = {a: i for i, a in enumerate(names.ALGORITHMS)}
    for (topo, n, a) in sorted(groups, key=lambda k: (topologies_of(loads).index(k[0]), k[1],
                                                      rank.get(k[2], len(rank)), k[2])):
        g = groups[(topo, n, a)]
        rows.append([topo, f"{n:,}", label(a), len(g),
                     median_range(stats.spread([x["throughput"] for x in g]), fmt_int),
                     median_range(stats.spread([x["cpu"].get("proxy") for x in g]), fmt_us)])
    return lines + table(["topology", "records", "algorithm", "loads", "inserts/s", "proxy µs/insert"], rows)


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


def change(spreads, key, base_key) -> str:
    """% change of the medians, marked ≈ when the two cells' repeats overlap."""
    a, b = spreads.get(key), spreads.get(base_key)
    value = pct_change(a["median"] if a else None, b["median"] if b else None)
    if value is None:
        return MISSING
    return f"{NOISE}{fmt_pct(value)}" if stats.overlaps(a, b) and a["n"] > 1 else fmt_pct(value)


def md_paper(runs) -> list[str]:
    """Our changes with size and with topology, next to what the paper reported."""
    spreads = throughput_spreads(runs)
    lines = ["## Beside the paper", "",
             "The paper's size figures come from a 3-member replica set with 1M / 3M / 5M "
             "records, each a 5M-vs-1M change computed as (x_size - x_smallest) / x_smallest "
             f"× 100. The same arithmetic is used here on the medians, per topology; `{NOISE}` marks a "
             "change whose repeats overlap.", ""]
    all_records = records_of(runs)
    if len(all_records) > 1:
        lines += [scale_sentence(all_records), ""]
    for topo in topologies_of(runs):
        topo_runs = only(runs, topology=topo)
        records = records_of(topo_runs)
        lines += [f"### Change with record count, {topo}", ""]
        if len(records) < 2:
            lines += [f"Only one record count ({records[0]:,}), so there is no change with size to compare.", ""]
            continue
        algorithms = algorithms_of(topo_runs)
        lines += [f"Cells: % change at {' / '.join(f'{n:,}' for n in records[1:])} records vs {records[0]:,}.", ""]
        rows = [[workload_label(w)] + [" / ".join(change(spreads, (topo, a, n, w), (topo, a, records[0], w))
                                                  for n in records[1:]) for a in algorithms]
                + [PAPER_SIZE.get(w, MISSING)] for w in workloads_of(topo_runs)]
        lines += table(["workload"] + [label(a) for a in algorithms] + ["paper (5M vs 1M)"], rows)
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
        records, algorithms = records_of(both), algorithms_of(both)
        lines += [f"#### {other} vs {base}", "",
                  f"Cells: % change at {' / '.join(f'{n:,}' for n in records)} records.", ""]
        rows = [[workload_label(w)] + [" / ".join(change(spreads, (other, a, n, w), (base, a, n, w)) for n in records)
                                       for a in algorithms] + [PAPER_TOPOLOGY.get(w, MISSING)]
                for w in workloads_of(both)]
        lines += table(["workload"] + [label(a) for a in algorithms] + ["paper (6 vs 3)"], rows)
    return lines


def md_figures(figures, dir_path: Path, topologies) -> list[str]:
    lines = ["## Figures", ""]
    if len(topologies) < 2:
        lines += ["Only one topology, so there are no topology comparison figures.", ""]
    for caption, png, svg in figures:
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
        raise LedgerError(f"{ledger_path} holds no usable cell lines")
    matrix, matrix_problem = read_matrix(dir_path)
    runs = ledger.runs

    csv_path = write_csv(runs, dir_path / "results.csv")
    figures = write_plots(runs, dir_path / "plots")
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    pooled = ratios(runs)
    lines = (md_intro(matrix, matrix_problem, ledger, generated) + HOW_TO_READ
             + md_answer(runs, pooled) + md_cpu(runs) + md_why_ratios(runs, pooled) + md_proxy_added(runs) + md_throughput(runs)
             + md_ratios_per_records(runs) + md_latency(runs) + md_loads(ledger.loads)
             + md_paper(runs) + md_figures(figures, dir_path, topologies_of(runs)))
    report_path = markdown.write(dir_path / "report.md", lines)
    return [str(csv_path)] + [str(p) for _, png, svg in figures for p in (png, svg)] + [str(report_path)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write results.csv, plots/ and report.md from DIR/ledger.jsonl.")
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
