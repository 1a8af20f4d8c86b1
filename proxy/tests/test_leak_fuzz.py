"""The leak fuzzer's run in `make test` (issue 39): FLE_LEAK_FUZZ_CASES generated messages (default
2,500, seeds from FLE_LEAK_FUZZ_SEED) through the real proxy, the real KMS and the embedded backend,
with a recording relay between the proxy and the backend. `make fuzz` runs it for longer
(FLE_LEAK_FUZZ_SECONDS) and writes its figures to results/fuzz/leak-fuzz.md. See leak_fuzz.py for
what the cases are and what the oracle is.
"""
import os
import time
from pathlib import Path

import pytest

import leak_fuzz
from conftest import JAR, ROOT, EncryptingProxy, client

CASES = int(os.environ.get("FLE_LEAK_FUZZ_CASES", "2500"))
SEED = int(os.environ.get("FLE_LEAK_FUZZ_SEED", "1"))
SECONDS = float(os.environ.get("FLE_LEAK_FUZZ_SECONDS", "0"))  # > 0: run batches until then, however many
REPORT = os.environ.get("FLE_LEAK_FUZZ_REPORT")  # a file for the figures (make fuzz)


@pytest.fixture(scope="module")
def leak_proxy(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, leak_fuzz.policy_yaml(kms.keys), name="proxy-leakfuzz").start()
    yield p
    p.stop()


def test_no_canary_reaches_the_server(leak_proxy, relay, backend):
    table = leak_fuzz.command_table(JAR)
    assert len(table["commands"]) > 150, "the command table as the jar prints it"
    direct = client(f"mongodb://127.0.0.1:{backend.port}")

    def reset():
        # a bounded collection, so finds and evaluated queries stay cheap however long the run
        for name in ("people", "all", "plain"):
            direct.hr.drop_collection(name)

    started = time.monotonic()
    total = {"cases": 0, "reply": 0, "closed": 0, "timeout": 0, "forwarded": 0, "sealed": 0}
    failures = []
    seed = SEED
    while True:
        n = CASES if SECONDS <= 0 else 1000
        summary, found = leak_fuzz.run(table, leak_proxy.port, relay, seed, n, reset=reset)
        for k in total:
            total[k] += summary[k]
        failures.extend(found)
        seed += n
        if SECONDS <= 0 or time.monotonic() - started >= SECONDS or failures:
            break
    elapsed = time.monotonic() - started
    direct.close()
    log = leak_proxy.log_text()
    if REPORT:
        Path(REPORT).parent.mkdir(parents=True, exist_ok=True)
        Path(REPORT).write_text(
            "# Leak fuzzer\n\n"
            f"proxy/tests/test_leak_fuzz.py: {total['cases']:,} cases, seeds {SEED}–{seed - 1}, "
            f"in {elapsed:.0f} s through the real proxy with a recording relay before the embedded backend.\n\n"
            f"| answered | closed by the proxy | no answer | forwarded (in part) | of those, holding canaries "
            f"(sealed or evaluated) | canaries that reached the server | canaries in the proxy's log |\n"
            f"|---:|---:|---:|---:|---:|---:|---:|\n"
            f"| {total['reply']:,} | {total['closed']:,} | {total['timeout']} | {total['forwarded']:,} | "
            f"{total['sealed']:,} | {sum(1 for f in failures if 'reached' in f[2])} | {log.count('C4NARY')} |\n\n"
            + ("Findings:\n\n" + "\n".join(f"- seed {s} ({w}): {why}" for s, w, why in failures[:50]) + "\n"
               if failures else "No findings.\n"))
    assert leak_proxy.alive(), "the proxy is still running"
    assert not failures, f"{len(failures)} finding(s) in {total['cases']} cases; the first: " + "\n".join(
        f"seed {s} ({w}): {why}" for s, w, why in failures[:10])
    assert "C4NARY" not in log, "a policy field's value in the proxy's own log"
    assert total["reply"] > total["cases"] // 3, f"most cases are answered, not closed: {total}"
