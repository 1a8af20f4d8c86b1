"""The statistics of the benchmark report: medians with their spread, and intervals for ratios.

Repeats of a cell run interleaved (each repeat runs every algorithm once, in a rotated order), so
a repeat of algorithm X and the same repeat of its baseline ran close together (in the same
window, in alternating slices, with --interleave slice): a ratio is taken per such pair, and its
interval comes from resampling the pairs (percentile bootstrap of the median). A ratio whose
interval holds 1.0 cannot be told from "no difference" by this run: the report labels it
"within noise".
"""
from __future__ import annotations

import random
import statistics

RESAMPLES = 4000
LEVEL = 0.95
# A fixed seed: the same ledger always gives the same report.
SEED = 20261123


def spread(values) -> dict | None:
    """Median, min, max and count of what the repeats measured; None when there is nothing."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def bootstrap(items: list, statistic, level: float = LEVEL, resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """Percentile bootstrap interval of statistic(sample) over `resamples` samples of `items` drawn
    with replacement, as many as there are items (seeded: the same items always give the same
    interval); None with fewer than two items. An item is a value, or a whole cluster of values
    when the statistic pools them (metrics_cost.py resamples pairs of processes)."""
    if len(items) < 2:
        return None
    rng = random.Random(SEED)
    estimates = sorted(statistic(rng.choices(items, k=len(items))) for _ in range(resamples))
    tail = (1 - level) / 2
    return estimates[int(tail * (resamples - 1))], estimates[int(round((1 - tail) * (resamples - 1)))]


def bootstrap_interval(values, level: float = LEVEL, resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the median of `values` (None with fewer than two)."""
    return bootstrap([v for v in values if v is not None], statistics.median, level, resamples)


def paired_ratios(numerator: dict, denominator: dict) -> list[float]:
    """x/base for every key (record count, repeat) both measured: pairs that ran side by side."""
    return [numerator[k] / denominator[k] for k in sorted(set(numerator) & set(denominator))
            if denominator[k] and numerator[k] is not None]


def ratio_summary(ratios: list[float]) -> dict | None:
    """Median of the paired ratios, its interval, and whether 1.0 lies inside it."""
    if not ratios:
        return None
    interval = bootstrap_interval(ratios)
    lo, hi = interval if interval else (min(ratios), max(ratios))
    return {"median": statistics.median(ratios), "lo": lo, "hi": hi, "n": len(ratios),
            "within_noise": lo <= 1.0 <= hi}


def overlaps(a: dict | None, b: dict | None) -> bool:
    """Two spreads (min-max) that share a value: their medians differ within the noise."""
    return bool(a and b and a["min"] <= b["max"] and b["min"] <= a["max"])
