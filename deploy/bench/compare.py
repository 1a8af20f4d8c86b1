#!/usr/bin/env python3
"""Do two runs of the same matrix agree? Per topology and workload, each cipher's x/plain
throughput ratio (the median of paired repeats, as in report.md) in both runs and their
difference, and whether proxy CPU per operation ranks plain < AES < ARIA < 3DES in each run.

    python3 -m deploy.bench.compare RUN1_DIR RUN2_DIR [--tolerance 0.05]     (from the repository's root)

The runs agree when every cell's ratio is within the spread each report states for it (its 95 %
interval: the two runs' intervals overlap), for each cipher the median over workloads of
|difference| is within the tolerance, and the ordering holds in every workload of both runs:
exit status 0, else 1 (2: a ledger is missing or empty). A cell whose intervals do not overlap
is marked **apart**; differences over the tolerance in single workloads are marked **over** and
counted too (a short cell's interval can be wider than the tolerance).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import report
from .markdown import MISSING, table
from .names import CPU_ORDER, label, series_name, workload_label


def load(directory: str) -> list[dict]:
    path = Path(directory) / "ledger.jsonl"
    if not path.is_file():
        raise report.LedgerError(f"no ledger at {path}")
    runs = report.read_ledger(path).runs
    if not runs:
        raise report.LedgerError(f"{path} holds no usable cell lines")
    return runs


def compare(first: list[dict], second: list[dict], tolerance: float) -> tuple[list[str], bool]:
    """Markdown lines of the comparison, and whether the runs agree."""
    import statistics
    ratios = [report.ratios(first), report.ratios(second)]
    lines, agree, apart = [], True, 0
    for topo in report.topologies_of(first):
        series = [s for s in report.ratio_pairs(report.only(first, topology=topo)) if s[1] == "plain"]
        workloads = report.workloads_of(report.only(first, topology=topo))
        header = ["workload"] + [h for s in series for h in (f"{series_name(s)} run 1", "run 2", "difference")]
        diffs, rows = {s: [] for s in series}, []
        for w in workloads:
            cells = []
            for s in series:
                a, b = (r.get((topo, w) + s) for r in ratios)
                if a and b:
                    diff = b["median"] - a["median"]
                    diffs[s].append(abs(diff))
                    overlap = a["lo"] <= b["hi"] and b["lo"] <= a["hi"]
                    agree &= overlap
                    apart += not overlap
                    cells += [f"{a['median']:.2f} [{a['lo']:.2f}, {a['hi']:.2f}]",
                              f"{b['median']:.2f} [{b['lo']:.2f}, {b['hi']:.2f}]",
                              f"{diff:+.2f}" + ("" if abs(diff) <= tolerance else " **over**")
                              + ("" if overlap else " **apart**")]
                else:
                    cells += [MISSING] * 3
                    agree = False
            rows.append([workload_label(w)] + cells)
        lines += [f"### {topo}", ""] + table(header, rows)
        for s, values in diffs.items():
            if not values:
                continue
            median = statistics.median(values)
            agree &= median <= tolerance
            over = sum(v > tolerance for v in values)
            lines.append(f"- {series_name(s)}: median |difference| over workloads {median:.3f} "
                         f"({'within' if median <= tolerance else 'over'} ±{tolerance:.2f}); largest {max(values):.2f}; "
                         f"{over} of {len(values)} workloads over ±{tolerance:.2f}")
        lines += [f"- Cells whose 95 % intervals do not overlap: {apart}", ""]
        apart = 0
        for i, runs in enumerate((first, second), 1):
            topo_runs = report.only(runs, topology=topo)
            cpu = report.cpu_spreads(topo_runs, "proxy")
            holds, breaks = report.cpu_ordering(cpu, topo, workloads, report.algorithms_of(topo_runs))
            agree &= not breaks and bool(holds)
            medians = "; ".join(f"{workload_label(w)}: " + " < ".join(
                f"{label(a)} {cpu[(topo, a, w)]['median']:.0f}" for a in CPU_ORDER
                if (topo, a, w) in cpu) for w in workloads)
            lines += [f"Run {i}, proxy µs of CPU per operation (medians): {medians}. Ordering holds in "
                      f"{', '.join(map(workload_label, holds)) or 'none'}"
                      + (f"; not in {', '.join(map(workload_label, breaks))}." if breaks else "."), ""]
    return lines, agree


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--tolerance", type=float, default=0.05)
    args = p.parse_args(argv)
    try:
        lines, agree = compare(load(args.first), load(args.second), args.tolerance)
    except report.LedgerError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    print(f"The runs {'agree' if agree else 'do not agree'}: every x/plain ratio's 95 % interval overlapping the "
          f"other run's, for each cipher the median over workloads of |x/plain difference| within "
          f"±{args.tolerance:.2f}, and the proxy CPU ordering in every workload of both runs.")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
