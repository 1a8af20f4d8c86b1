"""A reload that adds a collection protects it from the moment the file is read, whatever the KMS
does: the new policy is in force before any KMS round trip, and its keys are checked afterwards.

With the PyKMIP server frozen (SIGSTOP of its process tree) a collection added by a reload used to
apply only once the key check had timed out (about 20 s), and the inserts meanwhile were stored in
plaintext. Here a thread inserts into that collection without pause while the file changes; the
backend, read directly, must hold plaintext only from inserts begun before the reload was applied.
A key the KMS refuses (unknown, or of another algorithm than the suite) leaves the collection
refused with 9720020, never unencrypted."""
import os
import re
import signal
import threading
import time
from datetime import datetime

import pytest
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client, wait_until

KMS_WAIT_MS = 1500
# The key fetch must hang for the whole freeze (as it does against a real hung KMS with its
# default 10 s timeout), so every insert meanwhile waits kmsWaitMs for it and is then refused.
KMIP = f"  kmsWaitMs: {KMS_WAIT_MS}\n  negativeCacheSeconds: 1\n  readTimeoutMs: 60000\n"
FREEZE_AFTER_RELOAD_S = 6
# From writing the file and SIGHUP to the policy in force, with room for busy cores;
# a reload that waited for the frozen KMS would take the whole freeze, FREEZE_AFTER_RELOAD_S or more.
SIGHUP_MARGIN_S = 3.0


def with_kmip_settings(proxy):
    text = proxy.config.read_text()
    proxy.config.write_text(text.replace("envelopeSubtype: 0\n", KMIP + "envelopeSubtype: 0\n"))


def rewrite(proxy, collections):
    proxy.write(collections)
    with_kmip_settings(proxy)


def log_time(line):
    """The wall-clock time a proxy log line was written (its ISO-8601 prefix, to the millisecond)."""
    return datetime.fromisoformat(re.match(r"(\S+)", line).group(1)).timestamp()


class Inserter(threading.Thread):
    """Inserts {_id: n, secret: ...} one after another, noting when each began and how it ended."""

    def __init__(self, uri, db, coll):
        super().__init__(daemon=True)
        self.client = client(uri, retryWrites=False)
        self.coll = self.client[db][coll]
        self.stop = threading.Event()
        self.records = []  # (n, began, took, error code or None, errmsg)

    def run(self):
        n = 0
        while not self.stop.is_set():
            n += 1
            began = time.time()
            code, errmsg = None, ""
            try:
                self.coll.insert_one({"_id": n, "secret": f"plaintext {n}"})
            except OperationFailure as e:
                code, errmsg = e.code, e.details.get("errmsg", "")
            self.records.append((n, began, time.time() - began, code, errmsg))
            time.sleep(0.01)

    def finish(self):
        self.stop.set()
        self.join(30)
        self.client.close()


def test_a_collection_added_while_the_kms_is_frozen_is_never_stored_in_plaintext(workdir, backend, kms):
    keep = f'  frozen.kept: {{ key: {kms.keys["AES-256"]}, fields: "*" }}\n'
    added = keep + f'  frozen.added: {{ key: {kms.keys["AES-128"]}, fields: [secret] }}\n'
    raw = client(f"mongodb://127.0.0.1:{backend.port}")
    raw.frozen.added.drop()
    proxy = EncryptingProxy(workdir, backend.port, kms, keep, name="proxy-reload-frozen")
    with_kmip_settings(proxy)
    proxy.start()
    frozen = False
    inserter = Inserter(proxy.uri(), "frozen", "added")
    try:
        inserter.start()
        # inserts into a collection no policy names: stored as sent (the first takes a while on busy cores)
        wait_until(lambda: len(inserter.records) >= 3, 30, "inserts before the reload")

        os.killpg(kms.proc.pid, signal.SIGSTOP)
        frozen = True
        proxy.mark_log()
        written = time.time()
        rewrite(proxy, added)
        proxy.proc.send_signal(signal.SIGHUP)
        lines = proxy.new_log_lines("policy reloaded", timeout=10)
        assert lines, proxy.log_text()[-2000:]
        applied = log_time(lines[0]) + 0.001  # logged to the millisecond, after the swap
        assert applied - written < SIGHUP_MARGIN_S, f"in force {applied - written:.3f} s after the file was written"

        time.sleep(FREEZE_AFTER_RELOAD_S)
        resumed = time.time()
        os.killpg(kms.proc.pid, signal.SIGCONT)
        frozen = False
        deadline = time.monotonic() + 30
        while not any(r[1] > resumed and r[3] is None for r in inserter.records):
            assert time.monotonic() < deadline, "no insert succeeded after the KMS was resumed"
            time.sleep(0.1)
        time.sleep(0.5)
        inserter.finish()
        assert proxy.new_log_lines("keys checked with", timeout=30), proxy.log_text()[-2000:]
    finally:
        if frozen:
            os.killpg(kms.proc.pid, signal.SIGCONT)
        inserter.stop.set()
        proxy.stop()

    records = inserter.records
    before = [r for r in records if r[1] + r[2] < applied]
    assert before and all(r[3] is None for r in before), "inserts before the reload pass untouched"

    # While frozen, every insert begun after the reload waited kmsWaitMs for the key and was refused.
    during = [r for r in records if applied < r[1] and r[1] + r[2] < resumed]
    assert len(during) >= 2, records[-20:]
    for n, _, took, code, errmsg in during:
        assert code == 9720020 and f"did not deliver it within {KMS_WAIT_MS} ms" in errmsg, (n, code, errmsg)
        assert KMS_WAIT_MS / 1000 - 0.1 <= took < KMS_WAIT_MS / 1000 + 1.5, (n, took)

    after = [r for r in records if r[1] > resumed]
    assert any(r[3] is None for r in after), "inserts succeed once the KMS answers"

    # The backend, read directly: whatever was stored from an insert begun after the reload was
    # applied, or after the file was written plus a margin, holds an envelope under the new key.
    began = {r[0]: r[1] for r in records}
    stored = list(raw.frozen.added.find({}))
    plaintext = [d["_id"] for d in stored if isinstance(d["secret"], str)]
    sealed = [d for d in stored if isinstance(d["secret"], bytes)]
    assert plaintext and sealed, (len(plaintext), len(sealed))
    for n in plaintext:
        assert began[n] < applied, f"insert {n} began {began[n] - applied:.3f} s after the reload and was stored in plaintext"
        assert began[n] < written + SIGHUP_MARGIN_S
    key = bytes.fromhex(kms.keys["AES-128"].replace("-", ""))
    for d in sealed:
        assert d["secret"][0] == 0x82 and d["secret"][2:18] == key, d["_id"]
        assert began[d["_id"]] > applied
    raw.frozen.added.drop()
    raw.close()


@pytest.mark.parametrize("bad, reason", [
    ("key: 00000000-0000-4000-8000-00000000dead", "no key named 00000000-0000-4000-8000-00000000dead"),
    ("key: {aria}, suite: AES_GCM", "suite AES_GCM needs a AES key, but key {aria} is ARIA"),
])
def test_a_key_the_kms_refuses_leaves_the_added_collection_refused_not_unencrypted(workdir, backend, kms, bad, reason):
    aria = kms.keys["ARIA-256"]
    bad, reason = bad.format(aria=aria), reason.format(aria=aria)
    keep = f'  refused.kept: {{ key: {kms.keys["AES-256"]}, fields: "*" }}\n'
    raw = client(f"mongodb://127.0.0.1:{backend.port}")
    raw.refused.added.drop()
    proxy = EncryptingProxy(workdir, backend.port, kms, keep, name="proxy-reload-refused").start()
    try:
        with client(proxy.uri(), retryWrites=False) as c:
            proxy.mark_log()
            proxy.write(keep + f"  refused.added: {{ {bad}, fields: [secret] }}\n")
            proxy.proc.send_signal(signal.SIGHUP)
            assert proxy.new_log_lines("policy reloaded", timeout=10)
            errors = proxy.new_log_lines(" ERROR ", timeout=20)
            assert len(errors) == 1 and reason in errors[0] and "refused with 9720020" in errors[0], errors
            for i in range(3):
                with pytest.raises(OperationFailure) as e:
                    c.refused.added.insert_one({"_id": i, "secret": "never stored"})
                assert e.value.code == 9720020 and reason in e.value.details["errmsg"], e.value.details
            assert raw.refused.added.count_documents({}) == 0

            # The corrected file applies without a restart (for the unknown UUID: dropping a key
            # the KMS does not have lowers nothing), and the collection works.
            proxy.mark_log()
            proxy.write(keep + f"  refused.added: {{ key: {aria}, fields: [secret] }}\n")
            proxy.proc.send_signal(signal.SIGHUP)
            assert proxy.new_log_lines("policy reloaded", timeout=10), proxy.log_text()[-2000:]
            c.refused.added.insert_one({"_id": 10, "secret": "sealed"})
            assert raw.refused.added.find_one({"_id": 10})["secret"][0] == 0x82
            assert c.refused.added.find_one({"_id": 10})["secret"] == "sealed"
    finally:
        proxy.stop()
        raw.refused.added.drop()
        raw.close()
