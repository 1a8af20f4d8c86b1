"""How algorithms, workloads and record counts are ordered and shown in tables and figures."""
from __future__ import annotations

import re

#: The ciphers, in the paper's order and spelled as the KMS spells them: the KMS keeps its own list
#: (kms/fle_kms/ciphers.py, in another image) and kms/tests/test_ciphers.py fails when the two differ.
#: An algorithm of the matrix is a cipher's name in lower case (its collection: usertable_aes, ...).
CIPHERS = ("AES", "ARIA", "3DES", "SEED", "LEA")
#: The database without the proxy, and the proxy without encryption.
BASELINES = ("direct", "plain")
ALGORITHMS = BASELINES + tuple(c.lower() for c in CIPHERS)
ALGORITHM_LABELS = {**{b: b for b in BASELINES}, **{c.lower(): c for c in CIPHERS}}
#: The order in which the proxy's CPU per operation is expected to rise (the paper's ciphers): the
#: report and compare.py check it per workload.
CPU_ORDER = ("plain", "aes", "aria", "3des")
WORKLOADS = ("a", "b", "c", "d", "e", "f", "caching", "messenger", "recommendation")
OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE")


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


def series_name(key: tuple) -> str:
    """(algorithm, base) -> 'AES/plain'."""
    algo, base = key
    return f"{label(algo)}/{base}"


def short_count(n: int) -> str:
    """10000 -> '10k', 5000000 -> '5M': record counts short enough for axis ticks."""
    for divisor, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= divisor:
            return f"{n / divisor:g}{suffix}"
    return str(n)


def safe_name(text: str) -> str:
    """A free-form label (topology, workload) made safe to use in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"
