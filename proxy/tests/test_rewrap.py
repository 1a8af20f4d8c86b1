"""`fle-proxy.jar rewrap` (issue 16) on the real jar, the real PyKMIP server and the embedded
backend: a live 3DES collection moved to AES while pymongo threads insert, update and read through
the proxy; a collection written before the policy encrypted in place; --dry-run; a run killed
mid-way and resumed; a KMS outage mid-run that stops the run resumably; values planted around the
proxy in a plaintextReads: deny collection, never sealed (issue 26) unless adopted with
--adopt-plaintext."""
import os
import random
import signal
import subprocess
import time
import uuid

import pytest
from bson import Binary
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import OperationFailure

from conftest import JAR, TDES, AES_256, EncryptingProxy, Threads, backend_process, client, wait_until

SUITE_IDS = {"AES_GCM": 0x01, "TDES_CBC_HMAC": 0x15}


def rewrap(config, namespace, *extra, timeout=600):
    return subprocess.run(["java", "-jar", str(JAR), "rewrap", "--config", str(config), "--collection", namespace,
                           *extra], capture_output=True, text=True, timeout=timeout)


def header(value):
    """(format, suite id, deterministic, key UUID) of a stored envelope; None for anything else."""
    data = bytes(value) if isinstance(value, (bytes, Binary)) else None
    if not data or data[0] not in (0x81, 0x82):
        return None
    return data[0], data[1] & 0x3F, bool(data[1] & 0x40), str(uuid.UUID(bytes=data[2:18]))


def policy(key, previous=None, fields='{ name: {}, tag: { deterministic: true } }', ns="rw.users", reads=None):
    prev = f", previousKeys: [{previous}]" if previous else ""
    reads = f", plaintextReads: {reads}" if reads else ""
    return f"  {ns}: {{ key: {key}{prev}{reads}, fields: {fields} }}\n"


@pytest.fixture()
def stack(workdir, kms, request):
    backend = backend_process(workdir, name=f"backend-{request.node.name[:40]}").start()
    proxy = EncryptingProxy(workdir, backend.port, kms, policy(TDES), name=f"proxy-{request.node.name[:40]}").start()
    yield backend, proxy
    proxy.stop()
    backend.stop()


def reload(proxy, collections):
    """Writes the new policy and waits until the proxy applied it (SIGHUP)."""
    proxy.mark_log()
    proxy.write(collections)
    proxy.proc.send_signal(signal.SIGHUP)
    assert proxy.new_log_lines("policy reloaded", timeout=15), proxy.log_text()[-2000:]


class AppLoad(Threads):
    """Eight threads working through the proxy while rewrap runs: inserts, updates of the
    encrypted fields, reads by _id and deterministic equality queries, every acknowledged write
    remembered so it can be read back afterwards."""

    def __init__(self, uri, ids, tags, n=8):
        self.client = client(uri, maxPoolSize=n)
        self.coll = self.client.rw.users
        self.ids, self.tags = ids, tags
        self.expected = {}   # _id -> (name, tag) of its last acknowledged write
        self.errors, self.wrong = [], []
        self.ops = 0
        super().__init__(n)

    def run(self, i):
        rnd = random.Random(i)
        k = 0
        while not self.stop.is_set():
            k += 1
            time.sleep(0.002)   # an application, not a load generator: the backend scans for the tag queries
            try:
                choice = rnd.random()
                if choice < 0.25:
                    _id = f"new-{i}-{k}"
                    doc = {"_id": _id, "name": f"n-{i}-{k}", "tag": f"t{rnd.randrange(self.tags)}"}
                    self.coll.insert_one(doc)
                    with self.lock:
                        self.expected[_id] = (doc["name"], doc["tag"])
                elif choice < 0.5:
                    _id = f"u{rnd.randrange(self.ids)}"
                    name = f"upd-{i}-{k}"
                    # the original tag stays: equality queries below know every document's tag
                    with self.lock:   # one writer per document at a time, so "last acknowledged" is well defined
                        self.coll.update_one({"_id": _id}, {"$set": {"name": name}})
                        self.expected[_id] = (name, f"t{int(_id[1:]) % self.tags}")
                elif choice < 0.75:
                    _id = f"u{rnd.randrange(self.ids)}"
                    doc = self.coll.find_one({"_id": _id})
                    if doc is None or doc["tag"] != f"t{int(_id[1:]) % self.tags}":
                        self.wrong.append(f"read {_id}: {doc}")
                else:
                    t = rnd.randrange(self.tags)
                    found = {d["_id"] for d in self.coll.find({"tag": f"t{t}", "_id": {"$regex": "^u"}}, {"_id": 1})}
                    want = {f"u{j}" for j in range(t, self.ids, self.tags)}
                    if found != want:
                        self.wrong.append(f"tag t{t}: {len(found)} found, {len(want)} expected")
                with self.lock:
                    self.ops += 1
            except Exception as e:  # any failure counts
                self.errors.append(repr(e))

    def wait_ops(self, n, timeout=120):
        """Waits until n more operations than now are done (or one failed)."""
        target = self.ops + n
        wait_until(lambda: self.ops >= target or self.errors or self.wrong, timeout, f"{n} more application operations")


def test_a_live_3des_collection_moves_to_aes_while_the_application_works(stack, kms, workdir):
    backend, proxy = stack
    # 3,000 in `make test`; `make test-rewrap-20k` runs the 20,000 (FLE_REWRAP_DOCS).
    n = int(os.environ.get("FLE_REWRAP_DOCS", "3000"))
    tags = 30
    with client(proxy.uri()) as c:
        docs = [{"_id": f"u{j}", "name": f"name-{j}", "tag": f"t{j % tags}"} for j in range(n)]
        c.rw.users.insert_many(docs)
    raw = client(f"mongodb://127.0.0.1:{backend.port}").rw.users
    assert header(raw.find_one({"_id": "u1"})["name"])[1] == SUITE_IDS["TDES_CBC_HMAC"]

    # the lifecycle: the new key in the policy, the old one kept to open what is still under it
    reload(proxy, policy(AES_256, previous=TDES))
    with AppLoad(proxy.uri(), n, tags) as app:
        app.wait_ops(50)    # the application is at work (events, not a fixed time: both cores may be busy)
        ops_before = app.ops
        # four batches at once (issue 30): the checkpoint and every application write hold as with one.
        # Batches of 200: the embedded backend runs a command on its I/O thread; when each conditional
        # update still scanned the collection, batches of 1,000 at 20,000 documents once had an
        # application operation cancelled (pymongo does that when a heartbeat times out).
        r = rewrap(proxy.config, "rw.users", "--batch", "200", "--parallel", "4", timeout=max(600, n // 15))
        ops_during = app.ops - ops_before
        app.wait_ops(50)    # and goes on once rewrap is done
    assert r.returncode == 0, r.stdout + r.stderr
    print(f"rewrap of {n:,}: {ops_during} application operations while it ran, {app.ops} in all")
    assert ops_during > 0 and not app.errors and not app.wrong, (ops_during, app.errors[:5], app.wrong[:5])
    summary = r.stdout
    assert "previous_key" in summary and "rewritten" in summary, summary

    # every policy field of every document is under the new key, suite and variant, read from the backend
    stale = []
    for doc in raw.find():
        for field, det in (("name", False), ("tag", True)):
            h = header(doc[field])
            if h != (0x82, SUITE_IDS["AES_GCM"], det, AES_256):
                stale.append((doc["_id"], field, h))
    assert not stale, stale[:5]
    # every acknowledged write reads back as written, and the untouched documents are intact
    with client(proxy.uri()) as c:
        got = {d["_id"]: (d["name"], d["tag"]) for d in c.rw.users.find()}
        for _id, want in app.expected.items():
            assert got[_id] == want, _id
        for j in range(n):
            if f"u{j}" not in app.expected:
                assert got[f"u{j}"] == (f"name-{j}", f"t{j % tags}")
        assert c.rw.users.count_documents({"tag": "t7"}) >= n // tags
    # nothing refers to the old key any more: a dry run finds nothing to do
    dry = rewrap(proxy.config, "rw.users", "--dry-run")
    assert dry.returncode == 0 and " 0 would be rewritten" in dry.stdout, dry.stdout + dry.stderr


def test_plaintext_written_before_the_policy_is_encrypted_in_place_and_dry_run_counts_it(stack):
    backend, proxy = stack
    raw = client(f"mongodb://127.0.0.1:{backend.port}").rw.legacy
    raw.insert_many([{"_id": j, "name": f"p{j}", "tag": f"t{j % 3}", "other": j} for j in range(300)])
    # as docs/keys.md says: plaintextReads: allow while it is mixed, and there adopting plaintext is the default
    reload(proxy, policy(TDES) + policy(AES_256, ns="rw.legacy", reads="allow"))
    dry = rewrap(proxy.config, "rw.legacy", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "300 documents examined, 300 would be rewritten" in dry.stdout and "plaintext 600" in dry.stdout, dry.stdout
    assert "adopted (plaintext): 300 documents: 0, 1, 2," in dry.stdout and "… and 200 more" in dry.stdout, dry.stdout
    assert raw.find_one({"_id": 5})["name"] == "p5", "a dry run writes nothing"
    r = rewrap(proxy.config, "rw.legacy", "--batch", "64")
    assert r.returncode == 0 and "300 rewritten" in r.stdout, r.stdout + r.stderr
    doc = raw.find_one({"_id": 5})
    assert header(doc["name"]) == (0x82, SUITE_IDS["AES_GCM"], False, AES_256)
    assert header(doc["tag"])[2] is True and doc["other"] == 5, "only policy fields change"
    with client(proxy.uri()) as c:
        assert c.rw.legacy.find_one({"_id": 5}) == {"_id": 5, "name": "p5", "tag": "t2", "other": 5}
        assert c.rw.legacy.count_documents({"tag": "t1"}) == 100
    again = rewrap(proxy.config, "rw.legacy", "--dry-run")
    assert "0 would be rewritten" in again.stdout and "current 600" in again.stdout, again.stdout


def test_a_run_killed_midway_resumes_where_it_stopped(stack):
    backend, proxy = stack
    with client(proxy.uri()) as c:
        c.rw.users.insert_many([{"_id": f"k{j:05d}", "name": f"x{j}", "tag": "t"} for j in range(3000)])
    reload(proxy, policy(AES_256, previous=TDES))
    run = subprocess.Popen(["java", "-jar", str(JAR), "rewrap", "--config", str(proxy.config), "--collection",
                            "rw.users", "--batch", "200", "--rate", "600"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    raw = client(f"mongodb://127.0.0.1:{backend.port}")
    deadline = time.monotonic() + 180  # 60 s passed at a load average of 28 on 2 cores, the JVM starting
    while True:
        state = raw.fle_proxy.rewrap_state.find_one({"_id": "rw.users"})
        if state and state["counts"]["examined"] >= 1000:
            break
        assert time.monotonic() < deadline and run.poll() is None, run.stdout.read() if run.poll() is not None else ""
        time.sleep(0.1)
    run.kill()   # SIGKILL: no chance to save anything more
    run.wait()
    done_before = raw.fle_proxy.rewrap_state.find_one({"_id": "rw.users"})
    assert not done_before["finished"] and 1000 <= done_before["counts"]["examined"] < 3000
    r = rewrap(proxy.config, "rw.users", "--resume")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "resuming rw.users after _id" in r.stderr
    assert "3,000 documents examined" in r.stdout, r.stdout   # each document counted once over both runs
    final = raw.fle_proxy.rewrap_state.find_one({"_id": "rw.users"})
    assert final["finished"] and final["counts"]["examined"] == 3000
    fields = final["counts"]["fields"]
    # the documents of the batch under way when it died were rewritten then and are found current now
    assert fields.get("previous_key", 0) + fields.get("current", 0) == 6000
    assert all(header(d["name"])[3] == AES_256 for d in raw.rw.users.find())
    with client(proxy.uri()) as c:
        assert c.rw.users.find_one({"_id": "k02999"})["name"] == "x2999"
    nothing = rewrap(proxy.config, "rw.users", "--resume")
    assert nothing.returncode == 2 and "nothing to resume" in nothing.stderr


def test_a_kms_outage_mid_run_stops_it_resumably(stack, kms):
    backend, proxy = stack
    with client(proxy.uri()) as c:
        c.rw.users.insert_many([{"_id": f"o{j:05d}", "name": f"x{j}", "tag": "t"} for j in range(2000)])
    reload(proxy, policy(AES_256, previous=TDES))
    # a config of its own for the run: a 1 s key TTL and no outage window, so the outage bites at once
    config = proxy.config.with_name("rewrap-outage.yaml")
    text = proxy.config.read_text().replace("kmip:\n", "kmip:\n  cacheTtlSeconds: 1\n  outageWindowSeconds: 0\n"
                                            "  connectTimeoutMs: 500\n  readTimeoutMs: 500\n", 1)
    config.write_text(text)
    run = subprocess.Popen(["java", "-jar", str(JAR), "rewrap", "--config", str(config), "--collection", "rw.users",
                            "--batch", "100", "--rate", "400", "--retry-seconds", "3"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    raw = client(f"mongodb://127.0.0.1:{backend.port}")
    frozen = False
    try:
        deadline = time.monotonic() + 180
        while not (raw.fle_proxy.rewrap_state.find_one({"_id": "rw.users"}) or {}).get("counts", {}).get("examined"):
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.05)
        os.killpg(kms.proc.pid, signal.SIGSTOP)
        frozen = True
        out, err = run.communicate(timeout=120)
        assert run.returncode == 1, out + err
        assert "pausing, retry in" in err and "stopped" in err and "--resume" in err, err
        state = raw.fle_proxy.rewrap_state.find_one({"_id": "rw.users"})
        assert not state["finished"] and 0 < state["counts"]["examined"] < 2000
    finally:
        if frozen:
            os.killpg(kms.proc.pid, signal.SIGCONT)
    r = rewrap(config, "rw.users", "--resume")
    assert r.returncode == 0 and "2,000 documents examined" in r.stdout, r.stdout + r.stderr
    assert all(header(d["name"])[3] == AES_256 for d in raw.rw.users.find())


def test_values_planted_around_the_proxy_are_never_sealed_and_are_listed(stack):
    """Issue 26: in a plaintextReads: deny collection, values written straight into the backend fail
    reads (9720021); after a key change, rewrap must not seal them (that would make the proxy vouch
    for them): they stay byte for byte, and their _ids are listed in the output and the checkpoint.
    --adopt-plaintext adopts the plaintext string, and only it."""
    backend, proxy = stack
    with client(proxy.uri()) as c:   # rw.users: under 3DES, plaintextReads: deny (the default)
        c.rw.users.insert_one({"_id": "ok", "name": "written through the proxy", "tag": "t"})
    db = client(f"mongodb://127.0.0.1:{backend.port}")
    raw = db.rw.users
    envelope = bytes(raw.find_one({"_id": "ok"})["name"])
    planted = {"string": "planted-value", "subdoc": {"first": "Ada"}, "zeros": Binary(b"\x00" * 24),
               "cut": Binary(envelope[:10])}
    raw.insert_many([{"_id": k, "name": v} for k, v in planted.items()])
    as_bytes = raw.with_options(codec_options=CodecOptions(document_class=RawBSONDocument))
    stored = {k: as_bytes.find_one({"_id": k}).raw for k in planted}

    def refused(c, _id):
        with pytest.raises(OperationFailure) as e:
            c.rw.users.find_one({"_id": _id})
        return e.value.code == 9720021

    with client(proxy.uri()) as c:
        assert all(refused(c, k) for k in planted)

    reload(proxy, policy(AES_256, previous=TDES))
    r = rewrap(proxy.config, "rw.users")
    assert r.returncode == 3, r.stdout + r.stderr   # done, but values were left: a DBA wants to know
    assert "5 documents examined, 1 rewritten" in r.stdout, r.stdout
    assert ("4 field(s) in 4 document(s) left as they were; their _ids are listed below and in "
            "fle_proxy.rewrap_state") in r.stdout, r.stdout
    assert 'left (plaintext_denied): 1 document: "string"' in r.stdout, r.stdout
    assert 'left (not_adoptable): 2 documents: "subdoc", "zeros"' in r.stdout, r.stdout
    assert 'left (unreadable): 1 document: "cut"' in r.stdout, r.stdout
    assert "planted-value" not in r.stdout + r.stderr, "no field value is printed"
    assert {k: as_bytes.find_one({"_id": k}).raw for k in planted} == stored, "left byte for byte"
    listed = db.fle_proxy.rewrap_state.find_one({"_id": "rw.users"})["counts"]["listed"]
    assert {c: v["ids"] for c, v in listed.items()} == {
        "plaintext_denied": ["string"], "not_adoptable": ["subdoc", "zeros"], "unreadable": ["cut"]}, listed
    with client(proxy.uri()) as c:
        assert all(refused(c, k) for k in planted)
        assert c.rw.users.find_one({"_id": "ok"})["name"] == "written through the proxy"

    adopt = rewrap(proxy.config, "rw.users", "--adopt-plaintext")
    assert adopt.returncode == 3, adopt.stdout + adopt.stderr
    assert 'adopted (plaintext): 1 document: "string"' in adopt.stdout, adopt.stdout
    assert "3 field(s) in 3 document(s) left as they were" in adopt.stdout, adopt.stdout
    assert {k: as_bytes.find_one({"_id": k}).raw for k in planted if k != "string"} == \
        {k: v for k, v in stored.items() if k != "string"}
    assert header(raw.find_one({"_id": "string"})["name"]) == (0x82, SUITE_IDS["AES_GCM"], False, AES_256)
    with client(proxy.uri()) as c:
        assert c.rw.users.find_one({"_id": "string"})["name"] == "planted-value"
        assert all(refused(c, k) for k in planted if k != "string")
    listed = db.fle_proxy.rewrap_state.find_one({"_id": "rw.users"})["counts"]["listed"]
    assert listed["plaintext"]["ids"] == ["string"] and listed["unreadable"]["documents"] == 1, listed
