"""The Markdown every report of the lab is written in: report.md (report.py), metrics-cost.md
(metrics_cost.py), rewrap.md (rewrap_bench.py) and compare.py's tables. Tables, figures as
'median (min–max)', and the file itself."""
from __future__ import annotations

from pathlib import Path

MISSING = "–"   # a figure that was not measured


def cell(value) -> str:
    """Table cells may hold free text (matrix.json's notes and parameters): pipes and newlines would break rows."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def row(cells) -> str:
    return "|" + "|".join(f" {c} " if c else " " for c in map(cell, cells)) + "|"


def table(header, rows, align: str = "") -> list[str]:
    """A table and the blank line after it. `align` has a letter per column, `r` for a right-aligned
    one (figures), anything else or nothing for the default."""
    rule = "|" + "|".join("---:" if align[i:i + 1] == "r" else "---" for i in range(len(header))) + "|"
    return [row(header), rule] + [row(r) for r in rows] + [""]


def median_range(spread: dict | None, fmt, scale: float = 1.0, always: bool = False) -> str:
    """A spread (stats.spread) as 'median (min–max)', each value through fmt (a callable or a format
    string such as '{:,.0f}'); the one value when the repeats did not differ, unless `always`."""
    if not spread:
        return MISSING
    show = fmt.format if isinstance(fmt, str) else fmt
    median = show(spread["median"] * scale)
    if not always and (spread["n"] == 1 or spread["min"] == spread["max"]):
        return median
    return f"{median} ({show(spread['min'] * scale)}–{show(spread['max'] * scale)})"


def write(path, lines: list[str]) -> Path:
    """The lines as a file that ends in one newline."""
    path = Path(path)
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return path
