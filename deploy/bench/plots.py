"""The benchmark report's figures: every bar is a median over repeats, every error bar its spread
(min–max of the repeats) or, for ratios, its bootstrap interval; bars whose difference is within
the noise are hatched. PNG for GitHub to show, SVG for papers."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on the machines that run the matrix
import matplotlib.pyplot as plt  # noqa: E402  (must follow the backend choice)

from . import names  # noqa: E402

HATCH = "//"


def colour(name: str, palette: list[str]):
    """The same algorithm (or topology) keeps the same colour in every figure."""
    return plt.get_cmap("tab10")(palette.index(name) % 10 if name in palette else 9)


def _bars(ax, xs, stats, width, colour_, label, value="median", hatched=None):
    """Bars at xs for the given spreads (dicts with median/min/max), error bars min–max."""
    heights = [s[value] for s in stats]
    below = [s[value] - s["min"] for s in stats]
    above = [s["max"] - s[value] for s in stats]
    bars = ax.bar(xs, heights, width, yerr=[below, above], capsize=3, label=label, color=colour_)
    for bar, hatch in zip(bars, hatched or []):
        if hatch:
            bar.set_hatch(HATCH)
    return bars


def throughput_figure(spreads, topology, workload, algorithms, records, palette):
    """Grouped bars: x = record count, one bar per algorithm (the paper's Figs. 9-14)."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.0 + 0.35 * len(algorithms) * len(records)), 4.2))
    width = 0.8 / len(algorithms)
    for i, algo in enumerate(algorithms):
        points = [(j - 0.4 + width * (i + 0.5), spreads.get((topology, algo, n, workload)))
                  for j, n in enumerate(records)]
        points = [(x, s) for x, s in points if s]
        if points:
            _bars(ax, [x for x, _ in points], [s for _, s in points], width, colour(algo, palette),
                  names.label(algo))
    ax.set_xticks(range(len(records)), [f"{names.short_count(n)} records" for n in records])
    ax.set_ylabel("ops/s")
    ax.set_title(f"Workload {names.workload_label(workload)} on {topology}: throughput "
                 "(median, error bar = min–max over repeats)", fontsize="medium")
    ax.legend(fontsize="small", ncols=min(len(algorithms), 7), loc="upper center",
              bbox_to_anchor=(0.5, -0.1), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def topology_figure(spreads, workload, topologies, algorithms, records):
    """One panel per record count: for each algorithm, median throughput per topology side by
    side (the paper's Figs. 15-20, 3 vs 6 replica-set members)."""
    fig, axes = plt.subplots(1, len(records), sharey=True, squeeze=False,
                             figsize=(max(6.0, 0.5 * len(algorithms) * len(records) + 2), 4.2))
    width = 0.8 / len(topologies)
    for ax, n in zip(axes[0], records):
        for i, topo in enumerate(topologies):
            points = [(j - 0.4 + width * (i + 0.5), spreads.get((topo, algo, n, workload)))
                      for j, algo in enumerate(algorithms)]
            points = [(x, s) for x, s in points if s]
            if points:
                _bars(ax, [x for x, _ in points], [s for _, s in points], width, colour(topo, topologies), topo)
        ax.set_xticks(range(len(algorithms)), [names.label(a) for a in algorithms], rotation=45)
        ax.set_title(f"{names.short_count(n)} records", fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("ops/s")
    axes[0][0].legend(fontsize="small")
    fig.suptitle(f"Workload {names.workload_label(workload)}: median throughput per topology")
    fig.tight_layout()
    return fig


def ratio_figure(ratios, topology, workloads, series, palette):
    """x = workload, one bar per ratio (plain/direct, AES/plain, ...): median of the paired
    ratios, error bar = its 95 % bootstrap interval, hatched when that interval holds 1."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 0.3 * len(series) * len(workloads)), 4.2))
    width = 0.8 / max(1, len(series))
    for i, key in enumerate(series):
        points = [(j - 0.4 + width * (i + 0.5), ratios.get((topology, w) + key)) for j, w in enumerate(workloads)]
        points = [(x, r) for x, r in points if r]
        if points:
            stats = [{"median": r["median"], "min": r["lo"], "max": r["hi"]} for _, r in points]
            _bars(ax, [x for x, _ in points], stats, width, colour(key[0], palette), names.series_name(key),
                  hatched=[r["within_noise"] for _, r in points])
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(workloads)), [names.workload_label(w) for w in workloads])
    ax.set_ylabel("throughput ratio")
    ax.set_title(f"{topology}: what the proxy (plain/direct) and each cipher (x/plain) keep of the throughput\n"
                 "median of paired repeats, error bar = 95 % interval, hatched = within noise", fontsize="medium")
    ax.legend(fontsize="small", ncols=min(len(series), 6), loc="upper center", bbox_to_anchor=(0.5, -0.08),
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def cpu_figure(cpu, topology, workloads, algorithms, palette, process="proxy"):
    """µs of a process's CPU per operation, by algorithm and workload (median, min–max); one
    panel per workload, each on its own scale (a scan of E costs far more than a read)."""
    ncols = min(3, len(workloads))
    nrows = math.ceil(len(workloads) / ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(1.0 + 3.6 * ncols, 0.8 + 2.8 * nrows))
    for ax, w in zip(axes.flat, workloads):
        points = [(i, a, cpu.get((topology, a, w))) for i, a in enumerate(algorithms)]
        points = [(i, a, s) for i, a, s in points if s]
        for i, a, s in points:
            _bars(ax, [i], [s], 0.7, colour(a, palette), names.label(a))
        ax.set_xticks(range(len(algorithms)), [names.label(a) for a in algorithms], fontsize="small")
        ax.set_title(f"Workload {names.workload_label(w)}", fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.flat[len(workloads):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel(f"µs of {process} CPU per op")
    fig.suptitle(f"{topology}: µs of {process} CPU per operation, by algorithm and workload "
                 "(median over record counts and repeats, error bar = min–max)", fontsize="medium")
    return fig


def latency_figure(points, topology, palette):
    """p95 and p99 of each workload's main operation, per algorithm, at the largest size
    (median over repeats, error bar min–max)."""
    algorithms = names.ordered({a for _, _, s in points.values() for a in s}, palette)
    workloads = list(points)
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(
        min(14.0, max(6.0, 0.18 * len(workloads) * len(algorithms) + 3)), 6.0))
    width = 0.8 / max(1, len(algorithms))
    for ax, metric in zip(axes, ("p95_us", "p99_us")):
        for i, algo in enumerate(algorithms):
            xs, stats = [], []
            for j, w in enumerate(workloads):
                s = points[w][2].get(algo, {}).get(metric)
                if s:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    stats.append({k: s[k] / 1000 for k in ("median", "min", "max")})
            if xs:
                _bars(ax, xs, stats, width, colour(algo, palette), names.label(algo))
        ax.set_ylabel(f"{metric[:3]} latency (ms)")
        ax.grid(axis="y", alpha=0.3)
    axes[1].set_xticks(range(len(workloads)),
                       [f"{names.workload_label(w)}: {op}\n{names.short_count(n)} records"
                        for w, (op, n, _) in points.items()])
    axes[0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[0].set_title(f"{topology}: p95 / p99 latency of each workload's main operation (median, min–max)")
    fig.tight_layout()
    return fig


def save(fig, plots_dir: Path, basename: str) -> tuple[Path, Path]:
    """PNG and SVG; the figure is closed to free its memory."""
    png, svg = plots_dir / f"{basename}.png", plots_dir / f"{basename}.svg"
    fig.savefig(png, dpi=110, bbox_inches="tight")
    fig.savefig(svg, bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return png, svg
