"""The admin listener of the real proxy: /metrics moves as pymongo's traffic (writes, reads, a
refusal, a KMS outage) says it should, `promtool check metrics` accepts it, a real Prometheus
scrapes it and answers PromQL over it, and /readyz follows the upstream and the KMS while
/healthz stays 200. promtool and prometheus are the Debian package `prometheus` (.ci/run installs
it); without them those two tests are skipped with that reason."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from bson import Binary
from pymongo.errors import OperationFailure

from conftest import ProxyProcess, backend_process, client, free_port, wait_for_port

TTL_S = 2
WINDOW_S = 3


class AdminProxy(ProxyProcess):
    """The encrypting proxy with an admin listener and a short key TTL and outage window."""

    def __init__(self, tmp, upstream_port, kms, name):
        self.admin_port = free_port()
        kmip = kms.kmip_yaml() + (f"  cacheTtlSeconds: {TTL_S}\n  outageWindowSeconds: {WINDOW_S}\n"
                                  "  kmsWaitMs: 1500\n  connectTimeoutMs: 1000\n  readTimeoutMs: 1000\n")
        policy = (f"collections:\n  metrics.aes: {{ key: {kms.keys['AES-256']}, fields: [secret] }}\n"
                  f"  metrics.tdes: {{ key: {kms.keys['3DES']}, fields: [secret] }}\n"
                  f"  metrics.evaluated: {{ key: {kms.keys['AES-256']}, fields: [secret] }}\n"
                  f"  metrics.budget: {{ key: {kms.keys['AES-256']}, fields: [secret], maxScanDocuments: 5 }}\n")
        super().__init__(tmp, upstream_port, name=name,
                         extra=f"admin: 127.0.0.1:{self.admin_port}\n" + kmip + "envelopeSubtype: 0\n" + policy)

    def start(self, wait=True):
        super().start(wait)
        if wait:
            wait_for_port(self.admin_port, self.proc)  # it opens just after the data port
        return self

    def get(self, path):
        """(status, body) of GET on the admin listener."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}{path}", timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metrics(self):
        status, text = self.get("/metrics")
        assert status == 200
        return parse(text)


def parse(text):
    """{(name, frozenset(labels)): value} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, value = line.rsplit(" ", 1)
        name, _, labels = series.partition("{")
        pairs = frozenset(tuple(kv.split("=", 1)) for kv in labels.rstrip("}").split(",") if kv) if labels else frozenset()
        out[(name, frozenset((k, v.strip('"')) for k, v in pairs))] = float(value)
    return out


def value(m, name, **labels):
    """The sum of the series of this name whose labels include these."""
    want = set(labels.items())
    return sum(v for (n, ls), v in m.items() if n == name and want <= set(ls))


@pytest.fixture(scope="module")
def stack(workdir, kms):
    backend = backend_process(workdir, name="backend-metrics").start()
    proxy = AdminProxy(workdir, backend.port, kms, "proxy-metrics").start()
    yield backend, proxy
    proxy.stop()
    backend.stop()


def test_the_proxy_says_which_instance_it_is(stack):
    """fleproxy_instance_info: its name (here derived: the host's name and the listen port) and the
    serviceId a load-balanced client gets in the hello reply."""
    backend, proxy = stack
    info = [dict(ls) for (n, ls), v in proxy.metrics().items() if n == "fleproxy_instance_info" and v == 1.0]
    assert len(info) == 1, info
    assert info[0]["proxy_instance"].endswith(f"-{proxy.port}"), info
    with client(proxy.uri() + "/?loadBalanced=true") as c:
        hello = c.admin.command({"hello": 1, "loadBalanced": True})
    assert str(hello["serviceId"]) == info[0]["service_id"] and hello["msg"] == "isdbgrid"


def test_counters_and_histograms_follow_the_traffic(stack):
    backend, proxy = stack
    before = proxy.metrics()
    with client(proxy.uri()) as c:
        for i in range(20):
            c.metrics.aes.insert_one({"_id": i, "secret": f"s{i}", "n": i})
            c.metrics.plain.insert_one({"_id": i, "n": i})
        assert c.metrics.aes.find_one({"_id": 3})["secret"] == "s3"
        assert len(list(c.metrics.aes.find())) == 20
        with pytest.raises(OperationFailure) as refused:
            c.metrics.aes.find_one({"$where": "this.secret > 's'"})  # neither the server nor the proxy can evaluate it
    code = str(refused.value.code)
    after = proxy.metrics()

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("fleproxy_requests_total", command="insert", outcome="rewritten") == 20
    assert delta("fleproxy_requests_total", command="insert", outcome="forwarded") >= 20
    assert delta("fleproxy_requests_refused_total", command="find", code=code) == 1
    assert delta("fleproxy_requests_total", command="find", outcome="refused") == 1
    assert delta("fleproxy_crypto_values_total", suite="aes_gcm", operation="encrypt") == 20
    assert delta("fleproxy_crypto_values_total", suite="aes_gcm", operation="decrypt") == 21
    # every forwarded request is timed under its collection: the encrypted one by name, the rest as other
    assert delta("fleproxy_proxy_duration_seconds_count", collection="metrics.aes") == 22
    assert delta("fleproxy_upstream_duration_seconds_count", collection="metrics.aes") == 22
    assert delta("fleproxy_request_duration_seconds_count", collection="other") >= 20
    own = delta("fleproxy_proxy_duration_seconds_sum", collection="metrics.aes")
    total = delta("fleproxy_request_duration_seconds_sum", collection="metrics.aes")
    assert 0 < own < total
    assert delta("fleproxy_proxy_duration_seconds_bucket", collection="metrics.aes", le="+Inf") == 22
    for side in ("client", "upstream"):
        for direction in ("received", "sent"):
            assert delta("fleproxy_bytes_total", side=side, direction=direction) > 20 * 40
    assert delta("fleproxy_connections_accepted_total") >= 1
    assert delta("fleproxy_key_cache_lookups_total", result="hit") >= 20
    assert value(after, "fleproxy_kms_requests_total", operation="fetch", result="ok") >= 1
    assert value(after, "fleproxy_kms_request_duration_seconds_count", operation="fetch") >= 1
    assert value(after, "fleproxy_keys_cached") >= 2
    assert value(after, "fleproxy_kms_reachable") == 1
    assert value(after, "jvm_memory_used_bytes") > 0
    assert ("netty_allocator_memory_used_bytes" in {n for n, _ in after}
            or "fleproxy_netty_direct_memory_used_bytes" in {n for n, _ in after})
    # no value and no client address ever becomes a label
    status, text = proxy.get("/metrics")
    assert "s3" not in text.split() and "127.0.0.1" not in text
    # the time spent is estimated from a random one value in eight: none timed among 400 values
    # has odds of (7/8)^400, about 1e-23
    with client(proxy.uri()) as c:
        c.metrics.aes.insert_many([{"_id": 1000 + i, "secret": "x"} for i in range(400)])
        c.metrics.aes.delete_many({"_id": {"$gte": 1000}})
    burst = proxy.metrics()
    assert (value(burst, "fleproxy_crypto_seconds_total", suite="aes_gcm", operation="encrypt")
            > value(after, "fleproxy_crypto_seconds_total", suite="aes_gcm", operation="encrypt"))
    assert value(burst, "fleproxy_crypto_values_total", suite="aes_gcm", operation="encrypt") - value(
        after, "fleproxy_crypto_values_total", suite="aes_gcm", operation="encrypt") == 400


def test_a_tampered_envelope_counts_as_a_failure_and_a_reply_error(stack):
    backend, proxy = stack
    with client(proxy.uri()) as c, client(f"mongodb://127.0.0.1:{backend.port}") as direct:
        c.metrics.tdes.insert_one({"_id": "t", "secret": "x"})
        stored = direct.metrics.tdes.find_one({"_id": "t"})["secret"]
        flipped = bytes(stored[:-1]) + bytes([stored[-1] ^ 1])  # the last byte of the HMAC tag
        direct.metrics.tdes.update_one({"_id": "t"}, {"$set": {"secret": Binary(flipped, 0)}})
        before = proxy.metrics()
        with pytest.raises(OperationFailure) as failed:
            c.metrics.tdes.find_one({"_id": "t"})
    after = proxy.metrics()
    assert failed.value.code == 9720021
    assert value(after, "fleproxy_crypto_failures_total", suite="tdes_cbc_hmac") - value(
        before, "fleproxy_crypto_failures_total", suite="tdes_cbc_hmac") == 1
    assert value(after, "fleproxy_reply_errors_total", code="9720021") - value(
        before, "fleproxy_reply_errors_total", code="9720021") == 1


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) is not installed")
def test_promtool_accepts_the_exposition(stack):
    _, proxy = stack
    status, text = proxy.get("/metrics")
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus (Debian package prometheus) is not installed")
def test_a_real_prometheus_scrapes_the_proxy_and_answers_promql(stack, workdir):
    _, proxy = stack
    port = free_port()
    home = workdir / "prometheus"
    home.mkdir(exist_ok=True)
    (home / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: fle-proxy\n    static_configs: [{{targets: ['127.0.0.1:{proxy.admin_port}']}}]\n")
    log = open(home / "prometheus.log", "wb")
    prom = subprocess.Popen(["prometheus", f"--config.file={home / 'prometheus.yml'}",
                             f"--storage.tsdb.path={home / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    log.close()

    def query(q):
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url, timeout=5) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]["result"]

    try:
        wait_for_port(port, prom)
        with client(proxy.uri()) as c:
            deadline = time.monotonic() + 60
            while True:
                for i in range(20):
                    c.metrics.aes.find_one({"_id": i % 5})
                up = query('up{job="fle-proxy"}')
                inserts = query('sum(increase(fleproxy_requests_total{command="find"}[1m]))')
                p99 = query('histogram_quantile(0.99, sum by (le) '
                            '(rate(fleproxy_proxy_duration_seconds_bucket{collection="metrics.aes"}[1m])))')
                if (up and up[0]["value"][1] == "1" and inserts and float(inserts[0]["value"][1]) > 0
                        and p99 and p99[0]["value"][1] not in ("NaN", "0")):
                    break
                assert time.monotonic() < deadline, f"Prometheus never saw the proxy: {up} {inserts} {p99}"
                time.sleep(1)
        assert 0 < float(p99[0]["value"][1]) < 10
    finally:
        prom.terminate()
        prom.wait(timeout=30)


def wait_for(proxy, path, status, timeout, naming=""):
    """Polls an admin path until it answers this status (with a body naming this); returns that body."""
    deadline = time.monotonic() + timeout
    while True:
        got, body = proxy.get(path)
        if got == status and naming in body:
            return body
        assert time.monotonic() < deadline, f"{path} answered {got} {body}, not {status} {naming}, for {timeout} s"
        time.sleep(0.2)


def test_readyz_follows_the_upstream_and_healthz_stays_up(workdir, kms):
    backend = backend_process(workdir, name="backend-ready").start()
    proxy = AdminProxy(workdir, backend.port, kms, "proxy-ready").start()
    try:
        ready = json.loads(wait_for(proxy, "/readyz", 200, 15))
        assert ready == {"ready": True, "problems": [], "upstreams": [f"127.0.0.1:{backend.port}: reachable"]}
        backend.stop()
        why = json.loads(wait_for(proxy, "/readyz", 503, 15))
        assert why["ready"] is False and any("upstream" in p and "unreachable" in p for p in why["problems"])
        assert proxy.get("/healthz")[0] == 200
        backend.start()
        wait_for(proxy, "/readyz", 200, 15)
        assert value(proxy.metrics(), "fleproxy_ready") == 1
        assert proxy.get("/healthz")[0] == 200
        assert proxy.get("/nothing")[0] == 404
    finally:
        proxy.stop()
        backend.stop()


def test_readyz_fails_once_the_kms_is_gone_past_the_outage_window_and_recovers(workdir, kms):
    backend = backend_process(workdir, name="backend-kms").start()
    proxy = AdminProxy(workdir, backend.port, kms, "proxy-kms").start()
    frozen = False
    try:
        wait_for(proxy, "/readyz", 200, 15)
        with client(proxy.uri()) as c:
            c.metrics.aes.insert_one({"_id": "before", "secret": "x"})
            os.killpg(kms.proc.pid, signal.SIGSTOP)  # the KMS stops answering (its whole process group)
            frozen = True
            # Each key is served until TTL + window after its last fetch, and the two keys' refreshes
            # need not have been at the same moment: the oldest key's age says when the first expires.
            t0 = time.monotonic()
            ready_until = t0 + TTL_S + WINDOW_S - value(proxy.metrics(), "fleproxy_key_oldest_age_seconds")
            seen_in_window = False
            # within the TTL and then the outage window the keys are served from memory: still ready
            # (each probe begins at least 1 s before the oldest key's end, for a slow answer on busy cores)
            while time.monotonic() < ready_until - 1.0:
                m = proxy.metrics()
                seen_in_window |= value(m, "fleproxy_keys_in_outage_window") >= 1
                assert proxy.get("/readyz")[0] == 200
                c.metrics.aes.insert_one({"secret": "during"})
                time.sleep(0.3)
            # past the window, not ready; the two keys reach the end of theirs in either order
            why = json.loads(wait_for(proxy, "/readyz", 503, 15, naming="metrics.aes"))
            assert any("metrics.aes" in p and "outage window" in p for p in why["problems"]), why
            assert proxy.get("/healthz")[0] == 200
            m = proxy.metrics()
            assert seen_in_window or value(m, "fleproxy_key_cache_lookups_total", result="stale") > 0
            assert value(m, "fleproxy_kms_reachable") == 0
            assert value(m, "fleproxy_kms_requests_total", result="kms_unavailable") >= 1
            os.killpg(kms.proc.pid, signal.SIGCONT)
            frozen = False
            wait_for(proxy, "/readyz", 200, 30)
            assert value(proxy.metrics(), "fleproxy_kms_reachable") == 1
            c.metrics.aes.insert_one({"_id": "after", "secret": "y"})
            assert c.metrics.aes.find_one({"_id": "after"})["secret"] == "y"
    finally:
        if frozen:
            os.killpg(kms.proc.pid, signal.SIGCONT)
        proxy.stop()
        backend.stop()


class SlowPeer:
    """A connection that sends a request head one byte at a time and never finishes it."""

    HEAD = b"GET /metrics HTTP/1.1\r\nHost: proxy\r\nX-Slow: " + b"a" * 4000

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)
        self.opened = time.monotonic()
        self.sent = 0
        self.closed = None  # when the proxy was seen to close it

    def tick(self):
        """One more byte, unless the proxy has closed the connection (then notes when)."""
        try:
            got = self.sock.recv(4096)
        except BlockingIOError:
            got = None  # nothing: still open
        except OSError:
            got = b""  # reset
        if got is None:
            try:
                self.sock.send(self.HEAD[self.sent:self.sent + 1])
                self.sent += 1
                return
            except BlockingIOError:
                return
            except OSError:
                got = b""
        assert not got, f"a request that never ended was answered: {got[:200]!r}"
        self.closed = time.monotonic()

    def lived(self):
        return None if self.closed is None else self.closed - self.opened


class SlowPeers:
    """Many slow peers of the admin listener."""

    def __init__(self, port):
        self.port = port
        self.peers = []

    def open(self, n=1):
        self.peers += [SlowPeer(self.port) for _ in range(n)]

    def tick(self):
        for p in self.peers:
            if p.closed is None:
                p.tick()

    def open_count(self):
        return sum(1 for p in self.peers if p.closed is None)

    def close(self):
        for p in self.peers:
            p.sock.close()


def assert_healthz_answered(answers):
    """Every /healthz answered 200 within 4 s: it takes milliseconds, and 2.02 s was seen at a load
    average of 28 on 2 cores, while a peer that held the listener would hold it up to its 5 s head
    deadline."""
    bad = [a for a in answers if a[0] != 200 or a[1] > 4.0]
    assert not bad, f"{len(bad)} of {len(answers)} /healthz answers late or failed: {bad[:5]}"


def test_slow_peers_cannot_keep_healthz_from_answering(workdir, backend):
    """One connection dribbling a request used to stall /healthz for 10 s, and a few new ones a second kept
    it failing. Now: the head must arrive within 5 s, at most 16 connections are kept (the oldest
    unfinished one makes room), and /healthz answers all along. Margins are wide: both cores may be busy."""
    admin_port = free_port()
    proxy = ProxyProcess(workdir, backend.port, name="proxy-admin-slow",
                         extra=f"admin: 127.0.0.1:{admin_port}\n").start()
    peers = SlowPeers(admin_port)
    answers = []  # (status, seconds) of every /healthz during the attack

    def probe():
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/healthz", timeout=5) as r:
                answers.append((r.status, time.monotonic() - t0))
        except (urllib.error.URLError, OSError) as e:
            answers.append((str(e), time.monotonic() - t0))

    try:
        wait_for_port(admin_port, proxy.proc)
        # fewer than the limit: each is closed when its 5 s are up, not before, however it trickles
        peers.open(8)
        deadline = time.monotonic() + 20
        while peers.open_count() and time.monotonic() < deadline:
            peers.tick()
            probe()
            time.sleep(0.2)
        assert_healthz_answered(answers)
        lived = [p.lived() for p in peers.peers]
        assert all(t is not None and 4.0 <= t <= 9.0 for t in lived), lived
        # a flood: 30 at once, then five new ones a second for 12 s
        peers.open(30)
        flood_ends = time.monotonic() + 12
        while time.monotonic() < flood_ends:
            peers.open()
            peers.tick()
            probe()
            time.sleep(0.2)
        deadline = time.monotonic() + 20
        while peers.open_count() and time.monotonic() < deadline:
            peers.tick()
            time.sleep(0.2)
        assert_healthz_answered(answers)
        assert len(answers) > 40
        lived = [p.lived() for p in peers.peers[8:]]
        assert all(t is not None and t <= 9.0 for t in lived), lived  # evicted early, or closed at 5 s
        # a head over the size limit is refused at once: a 431, or a reset if it comes first (the rest is never read)
        with socket.create_connection(("127.0.0.1", admin_port), timeout=10) as s:
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n")
                reply = s.recv(4096)
            except (ConnectionResetError, BrokenPipeError):
                reply = b"HTTP/1.1 431 (reset first)"
        assert reply.startswith(b"HTTP/1.1 431 "), reply
        status, body = 0, ""
        with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10) as r:
            status, body = r.status, r.read().decode()
        assert status == 200 and "fleproxy_connections_open" in body
    finally:
        peers.close()
        proxy.stop()


def test_queries_the_proxy_evaluates_are_counted_with_their_candidates(stack):
    backend, proxy = stack
    with client(proxy.uri()) as c:
        c.metrics.evaluated.drop()
        c.metrics.evaluated.insert_many([{"_id": i, "n": i % 2, "secret": f"s{i}"} for i in range(10)])
        before = proxy.metrics()
        # the server narrows to n == 1 (5 documents); the proxy evaluates the range on them
        assert [d["_id"] for d in c.metrics.evaluated.find({"n": 1, "secret": {"$gt": "s4"}}).sort("_id", 1)] == [5, 7, 9]
    after = proxy.metrics()
    ns = "metrics.evaluated"
    assert value(after, "fleproxy_evaluated_queries_total", collection=ns, outcome="answered") - value(
        before, "fleproxy_evaluated_queries_total", collection=ns, outcome="answered") == 1
    assert value(after, "fleproxy_evaluated_candidates_total", collection=ns) - value(
        before, "fleproxy_evaluated_candidates_total", collection=ns) == 5


def test_refusals_are_counted_where_they_happen_and_answers_the_proxy_made_itself(stack):
    """Issue 39: a refusal in place of an answer (over the scan budget) is a refusal of its command, not an
    answered evaluated query; a request the proxy answers itself (a getMore and a killCursors of the cursor it
    holds) is in requests_total as answered; a refusal by the admission gate is counted like any other."""
    backend, proxy = stack
    with client(proxy.uri()) as c:
        c.metrics.budget.drop()
        c.metrics.budget.insert_many([{"_id": i, "secret": f"s{i}"} for i in range(10)])
        c.metrics.evaluated.drop()
        c.metrics.evaluated.insert_many([{"_id": i, "secret": f"s{i}"} for i in range(8)])
        before = proxy.metrics()
        with pytest.raises(OperationFailure) as e:
            list(c.metrics.budget.find({"secret": {"$gt": "s"}}))
        assert e.value.code == 9720012
        cursor = c.metrics.evaluated.find({"secret": {"$gt": "s"}}, batch_size=2)  # held by the proxy
        next(cursor)
        next(cursor), next(cursor)  # its getMore, answered by the proxy
        cursor.close()  # its killCursors, answered by the proxy
        with pytest.raises(OperationFailure) as e:
            c.get_database("METRICS").budget.find_one({})
        assert e.value.code == 9720011
    after = proxy.metrics()

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("fleproxy_requests_refused_total", command="find", code="9720012") == 1
    assert delta("fleproxy_reply_errors_total", code="9720012") == 1
    assert delta("fleproxy_evaluated_queries_total", collection="metrics.budget", outcome="over_budget") == 1
    assert delta("fleproxy_evaluated_queries_total", collection="metrics.budget", outcome="answered") == 0
    assert delta("fleproxy_requests_total", command="getMore", outcome="answered") >= 1
    assert delta("fleproxy_requests_total", command="killCursors", outcome="answered") == 1
    assert delta("fleproxy_requests_refused_total", command="find", code="9720011") == 1
