"""The latency a twin adds (make bench-audit, make bench-metrics): from each pair's side-by-side
rounds, where both twins are loaded in the same seconds, the p50 and p99 of each operation's latency
with the feature and without, and the difference round by round. Read from the p50_latency_ms and
p99_latency_ms columns fle-bench writes; a CSV without them (older runs) gives nothing."""
from __future__ import annotations

import csv
import statistics
from pathlib import Path

from . import markdown

SUBJECTS = {"proxy-plain": "no policy", "encrypted": "AES-GCM, ten fields"}


def read_pair(path: Path) -> dict:
    """{(kind, suite, operation): [(p50 on, p50 off, p99 on, p99 off), ...]}, one tuple per side-by-side round, in ms."""
    rounds: dict = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["round"].startswith("s") or not row.get("p50_latency_ms") or not row.get("p99_latency_ms"):
                continue
            key = (row["kind"], row["suite"], row["operation"], row["round"])
            rounds.setdefault(key, {})[row["metrics"] == "true"] = (float(row["p50_latency_ms"]),
                                                                     float(row["p99_latency_ms"]))
    out: dict = {}
    for (kind, suite, op, _), by in sorted(rounds.items()):
        if True in by and False in by:
            out.setdefault((kind, suite, op), []).append((by[True][0], by[False][0], by[True][1], by[False][1]))
    return out


def judge(pairs: list[dict]) -> list[dict]:
    """Per subject and operation, over every round of every pair: medians of each percentile with and
    without, and the median of the round-by-round differences (what the feature adds)."""
    lines = []
    for key in sorted({k for p in pairs for k in p}):
        rounds = [r for p in pairs for r in p.get(key, [])]
        med = lambda i: statistics.median(r[i] for r in rounds)  # noqa: E731
        lines.append({"kind": key[0], "suite": key[1], "operation": key[2], "rounds": len(rounds),
                      "p50_on": med(0), "p50_off": med(1), "p99_on": med(2), "p99_off": med(3),
                      "p50_added": statistics.median(r[0] - r[1] for r in rounds),
                      "p99_added": statistics.median(r[2] - r[3] for r in rounds)})
    return lines


def section(lines: list[dict], with_what: str) -> list[str]:
    """The latency table of metrics-cost.md; nothing when the CSVs had no percentiles."""
    if not lines:
        return []
    rows = [[SUBJECTS.get(ln["kind"], ln["kind"]), ln["operation"], ln["rounds"],
             f"{ln['p50_on']:.3f}", f"{ln['p50_off']:.3f}", f"{ln['p50_added'] * 1000:+.0f}",
             f"{ln['p99_on']:.3f}", f"{ln['p99_off']:.3f}", f"{ln['p99_added'] * 1000:+.0f}"] for ln in lines]
    return (["## Latency", "",
             "Each operation's latency as the client threads measured it in the same side-by-side rounds (8 "
             "threads on each twin at once, so under load): the median over the rounds of each phase's p50 and "
             "p99, in ms, and *added*, the median of the round-by-round differences, in µs.", ""]
            + markdown.table(["subject", "operation", "rounds", f"p50 ms {with_what}", "without", "added µs",
                              f"p99 ms {with_what}", "without", "added µs"], rows, align="llrrrrrrr"))
