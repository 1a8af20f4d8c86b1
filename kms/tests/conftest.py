"""A KMS directory and a running pykmip-server, set up through the kms CLI itself."""
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KMS = ROOT / "kms" / "kms"
JAR = ROOT / "proxy" / "target" / "fle-proxy.jar"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kms(*args, check=True, timeout=120):
    r = subprocess.run([str(KMS), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"kms {' '.join(map(str, args))} exited {r.returncode}: {r.stdout}{r.stderr}")
    return r


def wait_for_port(port, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"kms serve exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"the KMS did not listen on {port}")


class Server:
    def __init__(self, directory: Path, port: int):
        self.dir = directory
        self.port = port
        self.proc = None

    def start(self):
        out = open(self.dir / "serve.out", "ab")
        self.proc = subprocess.Popen([str(KMS), "serve", "--dir", str(self.dir)], stdout=out, stderr=subprocess.STDOUT)
        out.close()
        wait_for_port(self.port, self.proc)
        return self

    def stop(self, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise


@pytest.fixture(scope="session")
def kms_server(tmp_path_factory):
    d = tmp_path_factory.mktemp("kms")
    port = free_port()
    kms("init", "--dir", d, "--port", port)
    server = Server(d, port).start()
    yield server
    server.stop()
