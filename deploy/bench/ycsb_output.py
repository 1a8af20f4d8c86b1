"""Read YCSB's measurements: per operation its count, average/p95/p99 latency and how many
returned what (OK, NOT_FOUND, an error).

The matrix runner's sessions (dev.fleproxy.ycsb.Session) print them as JSON, named as YCSB's text
exporter names them; `parse` reads that text (`[READ], 95thPercentileLatency(us), 1234`), which
`site.ycsb.Client` prints, into the same form.
"""
from __future__ import annotations

# Return codes that are not failures of the store: OK and the batching binding's deferred OK.
# NOT_FOUND is counted apart: workloads that delete see some; a read-only workload may see none.
_OK = {"OK", "BATCHED_OK"}
_SKIPPED_OPS = {"CLEANUP"}


class YcsbOutputError(ValueError):
    """YCSB's output lacks the figures a finished phase prints (it failed or was killed)."""


def summarize(measurements: dict) -> dict:
    """{OP: {measurement: value}} as YCSB's exporter names them -> {OP: {count, avg_us, p95_us,
    p99_us, errors, not_found}}; count and latencies are of the operations that returned OK (YCSB
    measures the others under "<OP>-FAILED", left out here as CLEANUP and GC are); errors and
    not_found come from the return codes."""
    ops = {}
    for section, values in measurements.items():
        if section.startswith("TOTAL_GC") or section in _SKIPPED_OPS or section.endswith("-FAILED"):
            continue
        op = {"count": int(values.get("Operations", 0)), "avg_us": values.get("AverageLatency(us)"),
              "p95_us": values.get("95thPercentileLatency(us)"), "p99_us": values.get("99thPercentileLatency(us)"),
              "errors": 0, "not_found": 0}
        for metric, value in values.items():
            if not metric.startswith("Return="):
                continue
            status = metric[len("Return="):]
            if status == "NOT_FOUND":
                op["not_found"] += int(value)
            elif status not in _OK:
                op["errors"] += int(value)
        ops[section] = op
    return ops


def parse(text: str) -> dict:
    """YCSB Client's text output -> {"throughput", "runtime_ms", "ops": summarize(...)}."""
    overall: dict[str, float] = {}
    sections: dict[str, dict] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0].startswith("[") or not parts[0].endswith("]"):
            continue
        section, metric, value = parts[0][1:-1], parts[1], parts[2]
        try:
            number = float(value)
        except ValueError:
            continue
        if section == "OVERALL":
            overall[metric] = number
        else:
            sections.setdefault(section, {})[metric] = number
    if "Throughput(ops/sec)" not in overall:
        raise YcsbOutputError("no [OVERALL] throughput in YCSB's output: the phase did not finish")
    return {"throughput": overall["Throughput(ops/sec)"], "runtime_ms": overall.get("RunTime(ms)"),
            "ops": summarize(sections)}
