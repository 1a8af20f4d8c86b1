"""The results ledger: one JSON object per line, appended as each load or cell finishes.

Appending whole lines (flushed and fsynced) is what makes a matrix resumable: whatever is in the
file finished; a run killed mid-cell leaves no line for that cell, and the next run redoes it.
"""
from __future__ import annotations

import json
import os


def run_key(topology: str, algorithm: str, records: int, workload: str, repeat: int) -> tuple:
    return ("run", topology, algorithm, int(records), workload, int(repeat))


def load_key(topology: str, algorithm: str, records: int, table: str = "usertable") -> tuple:
    return ("load", topology, algorithm, int(records), table)


def key_of(entry: dict) -> tuple | None:
    if entry.get("kind") == "run":
        return run_key(entry["topology"], entry["algorithm"], entry["records"], entry["workload"], entry["repeat"])
    if entry.get("kind") == "load":
        return load_key(entry["topology"], entry["algorithm"], entry["records"], entry.get("table", "usertable"))
    return None


def read(path: str) -> list[dict]:
    """Every complete entry; a torn last line (the machine died while writing it) is ignored."""
    if not os.path.exists(path):
        return []
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and key_of(entry) is not None:
                entries.append(entry)
    return entries


def done_keys(path: str) -> set[tuple]:
    return {key_of(e) for e in read(path)}


def append(path: str, entry: dict) -> None:
    with open(path, "a", encoding="utf-8") as f:
        # A torn line left by a killed writer must not swallow this one.
        if f.tell() > 0:
            with open(path, "rb") as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    f.write("\n")
        f.write(json.dumps(entry, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())
