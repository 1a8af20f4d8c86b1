"""Parse what YCSB's Client prints at the end of a phase (its text measurement exporter).

Lines look like `[READ], 95thPercentileLatency(us), 1234`. We keep the overall throughput and
run time, and per operation its count, average/p95/p99 latency and how many returned what.
"""
from __future__ import annotations

# Return codes that are not failures of the store: OK, the batching binding's deferred OK, and a
# missing record (workloads that delete, or read keys being inserted, see some).
_NOT_ERRORS = {"OK", "BATCHED_OK", "NOT_FOUND"}
_SKIPPED_OPS = {"CLEANUP"}


class YcsbOutputError(ValueError):
    """YCSB's output lacks the figures a finished phase prints (it failed or was killed)."""


def parse(text: str) -> dict:
    """Return {"throughput", "runtime_ms", "ops": {OP: {count, avg_us, p95_us, p99_us, errors, not_found}}}."""
    overall: dict[str, float] = {}
    ops: dict[str, dict] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0].startswith("[") or not parts[0].endswith("]"):
            continue
        section, metric, value = parts[0][1:-1], parts[1], parts[2]
        if section == "OVERALL":
            overall[metric] = float(value)
            continue
        if section.startswith("TOTAL_GC") or section in _SKIPPED_OPS:
            continue
        op = ops.setdefault(section, {"count": 0, "avg_us": None, "p95_us": None, "p99_us": None,
                                      "errors": 0, "not_found": 0})
        if metric == "Operations":
            op["count"] = int(float(value))
        elif metric == "AverageLatency(us)":
            op["avg_us"] = float(value)
        elif metric == "95thPercentileLatency(us)":
            op["p95_us"] = float(value)
        elif metric == "99thPercentileLatency(us)":
            op["p99_us"] = float(value)
        elif metric.startswith("Return="):
            status = metric[len("Return="):]
            if status == "NOT_FOUND":
                op["not_found"] += int(value)
            elif status not in _NOT_ERRORS:
                op["errors"] += int(value)
    if "Throughput(ops/sec)" not in overall:
        raise YcsbOutputError("no [OVERALL] throughput in YCSB's output: the phase did not finish")
    # YCSB reports an operation that failed under a separate "<OP>-FAILED" section as well; its
    # count is already among the parent's Return= codes.
    ops = {name: v for name, v in ops.items() if not name.endswith("-FAILED")}
    return {"throughput": overall["Throughput(ops/sec)"], "runtime_ms": overall.get("RunTime(ms)"), "ops": ops}
