"""A KMS that hangs: the real PyKMIP server frozen (SIGSTOP of its whole process tree) for longer
than the proxy's key cache TTL, while clients keep working on collections whose keys are cached.

Nothing the clients do may fail or wait for the KMS (a wait for a key lasts kmsWaitMs, and a KMS
round trip readTimeoutMs, twice that: every operation begun from the freeze on, and a new
connection's ping, must take less than kmsWaitMs, which leaves room for busy cores); a request
that needs a key the proxy never held gets 9720020 once kmsWaitMs has passed; after SIGCONT the
proxy recovers by itself; the outage is logged once, not once per retry."""
import os
import signal
import time
import uuid

import pytest
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, Threads, client, wait_until

TTL_S = 4
KMS_WAIT_MS = 2500
READ_TIMEOUT_MS = 2 * KMS_WAIT_MS
FREEZE_S = 12  # three TTLs


def policy(kms, with_new_collection=False):
    lines = [f'  outage.aes: {{ key: {kms.keys["AES-256"]}, fields: "*" }}',
             f'  outage.aria: {{ key: {kms.keys["ARIA-256"]}, fields: "*" }}']
    if with_new_collection:
        # a key this proxy has never fetched
        lines.append(f'  outage.fresh: {{ key: {kms.keys["AES-128"]}, fields: "*" }}')
    return "\n".join(lines) + "\n"


class Workers(Threads):
    """Eight threads inserting and reading back by _id, timing every operation."""

    def __init__(self, uri, n=8):
        self.client = client(uri, maxPoolSize=n)
        self.ops = 0
        self.failures = []
        self.slowest = 0.0  # of the operations begun from timed_from on
        self.timed_from = float("inf")  # set at the freeze: each thread's first operations (connections
        # opened, a cold JVM's first encryptions) took up to 3 s on busy cores, and are not the outage's
        super().__init__(n, join_timeout=10)

    def run(self, i):
        coll = self.client.outage["aes" if i % 2 else "aria"]
        while not self.stop.is_set():
            doc_id = uuid.uuid4().hex
            for op in (lambda: coll.insert_one({"_id": doc_id, "f": "x" * 100}),
                       lambda: coll.find_one({"_id": doc_id})):
                t0 = time.monotonic()
                try:
                    op()
                except Exception as e:  # any failure counts
                    with self.lock:
                        self.failures.append(repr(e))
                took = time.monotonic() - t0
                with self.lock:
                    self.ops += 1
                    if t0 >= self.timed_from:
                        self.slowest = max(self.slowest, took)


def test_a_hung_kms_freezes_nothing_and_the_proxy_recovers(workdir, backend, kms):
    proxy = EncryptingProxy(workdir, backend.port, kms, policy(kms), name="proxy-outage")
    kmip = (f"  cacheTtlSeconds: {TTL_S}\n  outageWindowSeconds: 120\n  negativeCacheSeconds: 1\n"
            f"  kmsWaitMs: {KMS_WAIT_MS}\n  connectTimeoutMs: 1000\n  readTimeoutMs: {READ_TIMEOUT_MS}\n")
    base = proxy.config.read_text()
    proxy.config.write_text(base.replace("envelopeSubtype: 0\n", kmip + "envelopeSubtype: 0\n"))
    proxy.start()
    frozen = False
    try:
        with Workers(proxy.uri()) as w:
            wait_until(lambda: w.ops >= 100, 60, "100 operations before the freeze")  # connected and warm
            before = w.ops
            proxy.mark_log()
            os.killpg(kms.proc.pid, signal.SIGSTOP)
            frozen = True
            t_freeze = w.timed_from = time.monotonic()

            # an operator adds a collection meanwhile: its key cannot be fetched
            proxy.config.write_text(base.replace("envelopeSubtype: 0\n", kmip + "envelopeSubtype: 0\n")
                                    .replace(policy(kms), policy(kms, with_new_collection=True)))
            assert proxy.new_log_lines("policy reloaded", timeout=10), "the new policy applies though its key is unknown"
            # The reload is in force at once; its key check has begun the fetch of the new key,
            # which hangs until readTimeoutMs (5 s), so the insert below waits on that fetch.
            time.sleep(1.2)
            fresh = client(proxy.uri())
            try:
                t0 = time.monotonic()
                with pytest.raises(OperationFailure) as refused:
                    fresh.outage.fresh.insert_one({"_id": 1, "f": "never stored"})
                waited = time.monotonic() - t0
                assert refused.value.code == 9720020, refused.value.details
                assert f"within {KMS_WAIT_MS} ms" in refused.value.details["errmsg"], refused.value.details
                assert KMS_WAIT_MS / 1000 - 0.1 <= waited < KMS_WAIT_MS / 1000 + 1.5, waited

                # new connections are answered at once: no waiting for the KMS
                t0 = time.monotonic()
                assert client(proxy.uri(), serverSelectionTimeoutMS=KMS_WAIT_MS).admin.command("ping")["ok"] == 1
                assert time.monotonic() - t0 < KMS_WAIT_MS / 1000

                time.sleep(max(0.0, FREEZE_S - (time.monotonic() - t_freeze)))
                during = w.ops - before
                os.killpg(kms.proc.pid, signal.SIGCONT)
                frozen = False

                # the new collection works once the KMS answers, without a restart
                def writes():
                    try:
                        fresh.outage.fresh.insert_one({"f": "after the outage"})
                        return True
                    except OperationFailure as e:
                        assert e.code == 9720020, e.details
                        return False
                wait_until(writes, 30, "a write on the new collection after SIGCONT")
            finally:
                fresh.close()
            assert proxy.new_log_lines("answers again", timeout=15), "the end of the outage is logged"

        assert w.failures == [], w.failures[:5]
        assert during > 200, f"clients kept working while the KMS was frozen ({during} operations)"
        assert w.slowest < KMS_WAIT_MS / 1000, f"slowest operation {w.slowest:.3f} s (a wait for the KMS lasts kmsWaitMs)"
        stored = backend_client(backend).outage.aes.find_one({})
        assert isinstance(stored["f"], bytes), "the collections stayed encrypted"

        outage_lines = [l for l in proxy.log_text().splitlines()[proxy._mark:]
                        if "unreachable" in l or "did not answer" in l]
        assert 1 <= len(outage_lines) <= 8, outage_lines
    finally:
        if frozen:
            os.killpg(kms.proc.pid, signal.SIGCONT)
        proxy.stop()


def backend_client(backend):
    return client(f"mongodb://127.0.0.1:{backend.port}")
