"""Smoke test of proxy/bench/target/fle-bench.jar, the benchmark tools apart from the proxy's jar:
the byte relay carries a driver's traffic to the real backend, and the overhead benchmark runs
(tiny phases) against the backend, the relay and the real proxy, reporting their CPU per operation,
and against a real proxy with a TLS listener, set beside the plaintext one."""
import csv
import re
import subprocess
import time

import pytest

from conftest import BENCH_JAR, JAR, ROOT, BenchRelay, ProxyProcess, client, free_port
from pki import Pki


@pytest.fixture(scope="module")
def bench_jar():
    if not BENCH_JAR.exists():
        pytest.fail(f"{BENCH_JAR} is missing: run `make bench-jar` (`make test` builds it first)")
    return BENCH_JAR


def transport_of(read_log, timeout: float = 10.0) -> str:
    """The transport a relay's or proxy's start line names ("... listening on ..., transport epoll").
    read_log() returns the log's text; it is read again until the line is there, since the port
    accepts connections a moment before the line is written."""
    deadline = time.monotonic() + timeout
    while True:
        text = read_log()
        m = re.search(r"listening on .*, transport (\w+)", text)
        if m or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert m, f"no start line with a transport in:\n{text}"
    return m.group(1)


@pytest.fixture(scope="module")
def relay(bench_jar, backend, workdir):
    r = BenchRelay(workdir, backend.port).start()
    try:
        yield r.proc, r.port, r.log_path
    finally:
        r.stop()


def test_the_relay_round_trips_documents_and_says_where_it_listens(relay):
    proc, port, log_path = relay
    with client(f"mongodb://127.0.0.1:{port}") as c:
        coll = c.bench_smoke.docs
        coll.drop()
        docs = [{"_id": i, "s": "x" * 100, "n": i} for i in range(200)] + [{"_id": "big", "s": "y" * (4 << 20)}]
        coll.insert_many(docs)
        assert coll.find_one({"_id": 7}) == docs[7]
        assert coll.find_one({"_id": "big"}) == docs[-1]
        assert sorted(d["_id"] for d in coll.find({"n": {"$gte": 0}}).batch_size(7)) == list(range(200))
        coll.drop()
    lines = log_path.read_text().splitlines()
    assert len(lines) == 1 and f"listening on 127.0.0.1:{port}, upstream 127.0.0.1:" in lines[0], lines


def test_an_unknown_transport_is_one_line_and_exit_code_2(bench_jar):
    r = subprocess.run(["java", "-jar", str(bench_jar), "relay", "--listen", "127.0.0.1:0", "--upstream",
                        "127.0.0.1:1", "--transport", "carrier-pigeon"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == ["fle-bench relay: unknown transport carrier-pigeon (auto, nio, epoll or io_uring)"]


@pytest.mark.parametrize("transport", ["epoll", "io_uring"])
def test_an_unavailable_transport_is_one_line_and_exit_code_2(bench_jar, transport):
    # Netty's switch that refuses its native transports stands in for a machine without them.
    r = subprocess.run(["java", "-Dio.netty.transport.noNative=true", "-jar", str(bench_jar), "relay", "--listen",
                        "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--transport", transport],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fle-bench relay: transport {transport} is not available here: "), lines


@pytest.mark.parametrize("transport", ["nio", "epoll", "io_uring"])
def test_an_address_in_use_is_one_line_and_exit_code_1(bench_jar, relay, transport):
    proc, port, log_path = relay
    r = subprocess.run(["java", "-jar", str(bench_jar), "relay", "--listen", f"127.0.0.1:{port}", "--upstream",
                        "127.0.0.1:1", "--transport", transport], capture_output=True, text=True, timeout=60)
    if r.returncode == 2 and "is not available here" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"fle-bench relay: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_the_proxy_jar_no_longer_carries_the_benchmark():
    out = subprocess.run(["java", "-jar", str(JAR), "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "proxy" in out and "overhead" not in out


def test_overhead_reports_cpu_per_operation_of_the_relay_and_the_proxy(bench_jar, backend, relay, proxy, tmp_path):
    relay_proc, relay_port, relay_log = relay
    relay_transport = transport_of(relay_log.read_text)
    proxy_transport = transport_of(proxy.log_text)
    out = tmp_path / "out"
    r = subprocess.run(
        ["java", "-jar", str(bench_jar), "overhead",
         "--target", f"kind=direct,uri=mongodb://127.0.0.1:{backend.port}",
         "--target", f"kind=relay,uri=mongodb://127.0.0.1:{relay_port},pid={relay_proc.pid},"
                     f"transport={relay_transport},name=relay",
         "--target", f"kind=proxy-plain,uri={proxy.uri()},pid={proxy.proc.pid},transport={proxy_transport},"
                     "name=proxy,alloc=read",
         "--threads", "2", "--seconds", "0.5", "--rounds", "1", "--warmup", "0", "--alloc-seconds", "1",
         "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr

    # The per-target table: a CPU figure per 1,000 operations for both phases of the relay and the proxy.
    rows = {}
    for line in r.stdout.split("## Per target", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0] in ("direct", "relay", "proxy"):
            rows[cells[0]] = cells
    assert set(rows) == {"direct", "relay", "proxy"}, r.stdout
    for name in ("relay", "proxy"):
        for cpu in rows[name][5:8]:
            assert re.fullmatch(r"\d+\.\d", cpu), (name, rows[name])
    assert rows["direct"][5:8] == ["–", "–", "–"]
    if relay_transport == proxy_transport:
        assert "### 1. Proxy without policy" in r.stdout and "| proxy | relay |" in r.stdout
    assert "## Allocation per operation (JFR)" in r.stdout and "| proxy | read |" in r.stdout
    assert "## How measured" in r.stdout and "## Phases in run order" in r.stdout

    assert (out / "overhead.md").read_text().strip() == r.stdout.strip()
    with open(out / "overhead.csv") as f:
        phases = list(csv.DictReader(f))
    measured = [p for p in phases if p["round"] == "1"]
    assert [(p["target"], p["operation"]) for p in measured] == [
        ("direct", "insert"), ("direct", "read"), ("relay", "insert"), ("relay", "read"), ("proxy", "insert"),
        ("proxy", "read")]
    for p in measured:
        assert int(p["ops"]) > 0
        assert (p["cpu_ms_per_1000_ops"] == "") == (p["target"] == "direct")
    assert [(p["target"], p["operation"]) for p in phases if p["round"] == "probe"] == [("proxy", "read")]


def test_overhead_sets_a_tls_target_beside_its_plaintext_twin(bench_jar, backend, proxy, workdir, tmp_path):
    ca = Pki(workdir / "pki-bench", "bench CA")
    ca.issue("proxy-tls", "proxy", names=["127.0.0.1", "localhost"])
    tls_proxy = ProxyProcess(workdir, backend.port, name="bench-proxy-tls",
                             extra=f"tls:\n  cert: {ca.dir}/proxy-tls.pem\n  key: {ca.dir}/proxy-tls.key\n").start()
    try:
        transport = transport_of(proxy.log_text)
        tls_transport = transport_of(tls_proxy.log_text)
        assert "(TLS)" in tls_proxy.log_text()
        out = tmp_path / "out"
        r = subprocess.run(
            ["java", "-jar", str(bench_jar), "overhead",
             "--target", f"kind=direct,uri=mongodb://127.0.0.1:{backend.port}",
             "--target", f"kind=proxy-plain,uri={proxy.uri()},pid={proxy.proc.pid},transport={transport},name=proxy",
             "--target", f"kind=proxy-plain,uri={tls_proxy.uri()}/?tls=true,pid={tls_proxy.proc.pid},"
                         f"transport={tls_transport},tls=true,name=proxy-tls",
             "--tls-ca", str(ca.ca_file), "--no-alloc",
             "--threads", "2", "--seconds", "0.5", "--rounds", "1", "--warmup", "0", "--out", str(out)],
            capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        tls_proxy.stop()

    section = r.stdout.split("## TLS on the client side", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.split("### TLS beside field encryption", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[3] in ("proxy", "proxy-tls"):
            rows[cells[3]] = cells
    assert rows["proxy-tls"][:3] == [tls_transport, "none", "TLS"], rows
    assert re.fullmatch(r"\d+\.\d", rows["proxy-tls"][6]), rows
    if transport == tls_transport:
        assert rows["proxy"][:3] == [transport, "none", "plaintext"], rows
        assert re.fullmatch(r"[+-]\d+\.\d \([+-]\d+ %\)", rows["proxy-tls"][7]), rows
    assert "### TLS beside field encryption" in section
    # A TLS target is never judged: the targets' section does not name it.
    assert "proxy-tls" not in r.stdout.split("## The targets", 1)[1].split("## TLS on the client side", 1)[0]
    assert "| proxy-tls | proxy-plain, TLS | " in r.stdout

    with open(out / "overhead.csv") as f:
        phases = [p for p in csv.DictReader(f) if p["round"] == "1"]
    assert [(p["target"], p["operation"], p["tls"]) for p in phases] == [
        ("direct", "insert", "false"), ("direct", "read", "false"), ("proxy", "insert", "false"),
        ("proxy", "read", "false"), ("proxy-tls", "insert", "true"), ("proxy-tls", "read", "true")]
    assert all(int(p["ops"]) > 0 for p in phases)


def test_overhead_judges_a_proxy_with_metrics_side_by_side_with_its_twin(bench_jar, backend, proxy, workdir, tmp_path):
    admin = free_port()
    metered = ProxyProcess(workdir, backend.port, name="bench-proxy-metrics", extra=f"admin: 127.0.0.1:{admin}\n").start()
    try:
        transport = transport_of(proxy.log_text)
        metered_transport = transport_of(metered.log_text)
        args = ["java", "-jar", str(bench_jar), "overhead",
                "--target", f"kind=direct,uri=mongodb://127.0.0.1:{backend.port}",
                "--target", f"kind=proxy-plain,uri={proxy.uri()},pid={proxy.proc.pid},transport={transport},name=twin",
                "--target", f"kind=proxy-plain,uri={metered.uri()},pid={metered.proc.pid},"
                            f"transport={metered_transport},metrics=true,name=metered",
                "--no-alloc", "--threads", "2", "--seconds", "0.5", "--rounds", "1", "--warmup", "0",
                "--side-by-side-rounds", "2"]
        # at the same time, the two would insert the same _ids into one collection
        same = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert same.returncode == 2 and "give one a collection= of its own" in same.stderr, same.stderr
        args[args.index(f"kind=proxy-plain,uri={metered.uri()},pid={metered.proc.pid},"
                        f"transport={metered_transport},metrics=true,name=metered")] += ",collection=plain_m"
        out = tmp_path / "out"
        r = subprocess.run(args + ["--out", str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        metered.stop()
    if transport != metered_transport:
        pytest.skip(f"the two proxies chose different transports ({transport}, {metered_transport})")
    rule5 = r.stdout.split("### 5.", 1)[1].split("\n## ", 1)[0]
    assert "Judged on 2 side-by-side rounds" in rule5
    assert re.search(r"\| metered \| twin \| \d+\.\d \| \d+\.\d \| \d\.\d\d \(\d\.\d\d–\d\.\d\d\) \| ≤ 1\.03 \| ", rule5), rule5
    with open(out / "overhead.csv") as f:
        side = [(p["round"], p["target"], p["operation"]) for p in csv.DictReader(f) if p["round"].startswith("s")]
    # each round: both targets' inserts, then both targets' reads, measured over the same seconds;
    # which of the two is written first alternates between rounds
    order = {1: ("metered", "twin"), 2: ("twin", "metered")}
    assert side == [(f"s{n}", t, op) for n in (1, 2) for op in ("insert", "read") for t in order[n]], side
