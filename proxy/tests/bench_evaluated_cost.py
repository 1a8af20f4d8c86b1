"""What a query the proxy evaluates costs per examined candidate (deploy/bench/evaluated_cost.py),
against a proxy of its own with one collection encrypting `x`, printed as the section
`make bench-overhead` appends to its report.

Not a test (pytest does not collect it by name): `make bench-evaluated`."""
import sys
from pathlib import Path

from conftest import EncryptingProxy, client

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from deploy.bench import evaluated_cost  # noqa: E402


def test_evaluated_query_cost(workdir, backend, kms):
    key = kms.keys["AES-256"]
    p = EncryptingProxy(workdir, backend.port, kms, f"  b.c: {{ key: {key}, fields: {{ x: {{}}, pad: {{}} }} }}\n",
                        name="pb").start()
    c = client(p.uri())
    try:
        evaluated_cost.load(c.b.c)
        rows = evaluated_cost.measure(c.b.c, p.proc.pid)
    finally:
        c.close()
        p.stop()
    print("\n" + "\n".join(evaluated_cost.section(rows, 5, "make bench-evaluated")))
