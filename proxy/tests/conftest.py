"""Fixtures that start the real fat jar: the embedded backend and the proxy, on free ports."""
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from pymongo import MongoClient

ROOT = Path(__file__).resolve().parents[2]
JAR = ROOT / "proxy" / "target" / "fle-proxy.jar"
BENCH_JAR = ROOT / "proxy" / "bench" / "target" / "fle-bench.jar"

# The proxy rate-limits its lines about bad input (one per reason per 10 s, then a count); tests
# that check each bad input's own line run it with every line in full. test_bounds.py sets it back.
os.environ.setdefault("FLE_PROXY_BAD_INPUT_LOG_WINDOW_MS", "0")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening on {port} after {timeout}s")


def wait_until(predicate, timeout: float, what: str) -> None:
    """Polls until the predicate holds; fails naming what was awaited. For what other processes do in
    their own time: generous, since both cores may be busy."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.1)


class JavaProcess:
    """One `java -jar fle-proxy.jar ...` process (or of another jar) with its output in a log file."""

    def __init__(self, args, log_path: Path, port: int, jar: Path = JAR):
        if not jar.exists():
            raise RuntimeError(f"{jar} is missing: run `make build` first" if jar == JAR
                               else f"{jar} is missing: run `make bench-jar` (`make test` builds it first)")
        self.jar = jar
        self.args = args
        self.jvm_options = []  # e.g. a heap cap, for a benchmark that runs the proxy as deployments do
        self.log_path = log_path
        self.port = port
        self.proc = None

    def start(self, wait=True):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["java", *self.jvm_options, "-jar", str(self.jar), *self.args], stdout=log,
                                     stderr=subprocess.STDOUT)
        log.close()
        if wait:
            try:
                wait_for_port(self.port, self.proc)
            except BaseException:
                self.stop()  # a JVM left behind would load the machine for the tests after it
                raise
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


class BenchRelay(JavaProcess):
    """fle-bench.jar's byte relay in front of the backend: the floor the proxy's cost is compared with."""

    def __init__(self, tmp: Path, upstream_port: int, name="bench-relay"):
        port = free_port()
        super().__init__(["relay", "--listen", f"127.0.0.1:{port}", "--upstream", f"127.0.0.1:{upstream_port}"],
                         tmp / f"{name}.log", port, jar=BENCH_JAR)

    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}"


class ProxyProcess(JavaProcess):
    def __init__(self, tmp: Path, upstream_port: int, name="proxy", extra="", upstream=None):
        """extra: more lines for its config file (tls:, upstreamTls:, limits); upstream: another
        form of upstream: than 127.0.0.1:upstream_port (several mongos, a replica set)."""
        self.upstream_port = upstream_port
        port = free_port()
        config = tmp / f"{name}.yaml"
        up = f'"{upstream}"' if upstream else f"127.0.0.1:{upstream_port}"
        config.write_text(f"listen: 127.0.0.1:{port}\nupstream: {up}\n"
                          "upstreamConnectTimeoutMs: 2000\n" + extra)
        super().__init__(["proxy", "--config", str(config)], tmp / f"{name}.log", port)
        self._mark = 0

    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}"

    def mark_log(self):
        self._mark = len(self.log_text().splitlines())

    def new_log_lines(self, containing: str, timeout: float = 5.0):
        """Log lines written since mark_log() that contain the text (waits for at least one)."""
        deadline = time.monotonic() + timeout
        while True:
            lines = [l for l in self.log_text().splitlines()[self._mark:] if containing in l]
            if lines or time.monotonic() > deadline:
                return lines
            time.sleep(0.05)


class Threads:
    """n threads running self.run(i) until the with block ends (self.stop set, then joined);
    self.client, if a subclass made one, is closed after them."""

    def __init__(self, n, join_timeout=30):
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.join_timeout = join_timeout
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(n)]

    def run(self, i):
        raise NotImplementedError

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(self.join_timeout)
        if getattr(self, "client", None) is not None:
            self.client.close()


def backend_process(tmp: Path, name="backend", port=None, data=None) -> JavaProcess:
    port = port or free_port()
    args = ["backend", "--port", str(port)]
    if data:
        args += ["--data", str(data)]
    return JavaProcess(args, tmp / f"{name}.log", port)


def client(uri: str, **kw) -> MongoClient:
    kw.setdefault("serverSelectionTimeoutMS", 5000)
    return MongoClient(uri, **kw)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fle")


@pytest.fixture(scope="session")
def backend(workdir):
    b = backend_process(workdir).start()
    yield b
    b.stop()


@pytest.fixture(scope="session")
def proxy(workdir, backend):
    p = ProxyProcess(workdir, backend.port).start()
    yield p
    p.stop()


@pytest.fixture(scope="session")
def direct_client(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c
    c.close()


@pytest.fixture(scope="session")
def proxy_client(proxy):
    c = client(proxy.uri())
    yield c
    c.close()


# ---- the KMS and an encrypting proxy ---------------------------------------------------------

KMS_CLI = ROOT / "kms" / "kms"
AES_256 = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0"
ARIA_256 = "da6fd698-4681-3bb5-88ad-d1d9d68b1df6"
TDES = "93a7f87f-458c-31be-ad16-d5dfa2fc1bae"


class Kms:
    """A real PyKMIP server set up through the kms CLI, with the bootstrap keys."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.port = free_port()
        self.proc = None

    def cli(self, *args):
        r = subprocess.run([str(KMS_CLI), *map(str, args)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def start(self):
        self.cli("init", "--dir", self.dir, "--port", self.port)
        out = open(self.dir / "serve.out", "ab")
        # its own process group, so stop() can kill pykmip-server's workers with it
        self.proc = subprocess.Popen([str(KMS_CLI), "serve", "--dir", str(self.dir)], stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        out.close()
        try:
            wait_for_port(self.port, self.proc)
        except BaseException:
            self.stop()
            raise
        self.cli("bootstrap", "--dir", self.dir)
        import json
        self.keys = dict(json.loads((self.dir / "bootstrap.json").read_text()))
        self.keys.update({"AES-256": AES_256, "ARIA-256": ARIA_256, "3DES": TDES})
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def kmip_yaml(self) -> str:
        return (f"kmip:\n  host: 127.0.0.1\n  port: {self.port}\n  ca: {self.dir}/ca.pem\n"
                f"  clientCert: {self.dir}/proxy.pem\n  clientKey: {self.dir}/proxy.key\n")


@pytest.fixture(scope="session")
def kms(workdir):
    k = Kms(workdir / "kms").start()
    yield k
    k.stop()


class EncryptingProxy(ProxyProcess):
    """The proxy with a kmip: section and a collections: policy, in its own config file."""

    def __init__(self, tmp: Path, upstream_port: int, kms: Kms, collections: str, name="proxy-enc", admin=False,
                 upstream=None):
        """admin: also serve /metrics, /healthz, /readyz on a free port (self.admin_port); upstream:
        another form of upstream: than 127.0.0.1:upstream_port (a replica set's URI)."""
        super().__init__(tmp, upstream_port, name=name)
        self.kms = kms
        self.upstream = f'"{upstream}"' if upstream else f"127.0.0.1:{upstream_port}"
        self.config = tmp / f"{name}.yaml"
        self.admin_port = free_port() if admin else None
        self.write(collections)

    def write(self, collections: str):
        admin = f"admin: 127.0.0.1:{self.admin_port}\n" if self.admin_port else ""
        self.config.write_text(f"listen: 127.0.0.1:{self.port}\nupstream: {self.upstream}\n" + admin
                               + self.kms.kmip_yaml() + "envelopeSubtype: 0\ncollections:\n" + collections)


@pytest.fixture(scope="module")
def relay(backend):
    """A relay in front of the session's backend that records what a module's proxy sends it
    (relay.RecordingRelay): what the server, its logs and its files would see."""
    from relay import RecordingRelay
    r = RecordingRelay(backend.port)
    yield r
    r.close()
