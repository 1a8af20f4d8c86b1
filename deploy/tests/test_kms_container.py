"""The KMS container's entrypoint and the stack's proxy config, run for real outside a container.

deploy/docker/kms-entrypoint.sh is what the kms service runs; with its paths and port moved into
a temporary directory it runs here on the real PyKMIP server: certificates at first start only,
the bootstrap keys, the proxy's credentials handed over without the CA or admin keys, a ready file
for the healthcheck, a clean stop on SIGTERM. Then the real proxy starts with deploy/proxy/
proxy.yaml (only its addresses and credential paths moved), so the sample policy is validated
against the keys that entrypoint bootstrapped.
"""
import os
import re
import signal
import socket
import ssl
import stat
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from cryptography import x509

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "deploy" / "docker" / "kms-entrypoint.sh"
JAR = ROOT / "proxy" / "target" / "fle-proxy.jar"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, proc, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited with {proc.returncode} before {what}")
        time.sleep(0.2)
    raise AssertionError(f"no {what} after {timeout} s")


class Entrypoint:
    def __init__(self, tmp: Path):
        self.tmp, self.port = tmp, free_port()
        self.kms_dir, self.credentials, self.ready = tmp / "kms", tmp / "proxy-credentials", tmp / "kms-ready"
        self.log = tmp / "entrypoint.log"

    def start(self):
        env = {**os.environ, "FLE_KMS_DIR": str(self.kms_dir), "FLE_PROXY_CREDENTIALS": str(self.credentials),
               "FLE_PROXY_UID": str(os.getuid()), "FLE_KMS_BIND": "127.0.0.1", "FLE_KMS_PORT": str(self.port),
               "FLE_KMS_READY_FILE": str(self.ready), "FLE_KMS_CLI": str(ROOT / "kms" / "kms")}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([str(ENTRYPOINT)], env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_for("the ready file", self.ready.exists, self.proc)
        return self

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def entrypoint(tmp_path_factory):
    e = Entrypoint(tmp_path_factory.mktemp("kms-container")).start()
    yield e
    if e.proc.poll() is None:
        e.stop()


def test_first_start_makes_certificates_keys_and_hands_over_only_the_proxys_credentials(entrypoint):
    for name in ("ca.pem", "ca.key", "server.pem", "admin.pem", "proxy.pem", "proxy.key"):
        assert (entrypoint.kms_dir / name).exists(), name
    assert sorted(p.name for p in entrypoint.credentials.iterdir()) == ["ca.pem", "proxy-tls.key", "proxy-tls.pem",
                                                                        "proxy.key", "proxy.pem"]
    for key in ("proxy.key", "proxy-tls.key"):
        assert stat.S_IMODE((entrypoint.credentials / key).stat().st_mode) == 0o600
        assert (entrypoint.credentials / key).read_bytes() == (entrypoint.kms_dir / key).read_bytes()
    # the listener certificate names the stack's proxy service and the host's loopback
    tls = x509.load_pem_x509_certificate((entrypoint.credentials / "proxy-tls.pem").read_bytes())
    names = tls.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == {"proxy", "localhost"}
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    out = entrypoint.output()
    for uuid, alg in [("89d6d529-a2fe-31dd-ae60-3cb35458dcc0", "AES"), ("da6fd698-4681-3bb5-88ad-d1d9d68b1df6", "ARIA"),
                      ("93a7f87f-458c-31be-ad16-d5dfa2fc1bae", "3DES")]:
        assert any(line.startswith(uuid) and alg in line and "ACTIVE" in line for line in out.splitlines()), uuid
    assert "PRIVATE KEY" not in out


def admin_get(port, path):
    """(status, body) of GET on the proxy's admin listener; (0, why) when nothing answers."""
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


def admin_status(port, path):
    return admin_get(port, path)[0]


def stack_proxy_config(entrypoint, tmp: Path, text=None) -> Path:
    """deploy/proxy/proxy.yaml (or another config's text) with the container names and mount points
    moved to this machine."""
    cfg = yaml.safe_load(text or (ROOT / "deploy" / "proxy" / "proxy.yaml").read_text())
    cfg["listen"] = f"127.0.0.1:{free_port()}"
    cfg["upstream"] = f"127.0.0.1:{free_port()}"  # nothing there: the proxy connects upstream per client
    cfg["admin"] = f"127.0.0.1:{free_port()}"
    cfg["kmip"]["host"], cfg["kmip"]["port"] = "127.0.0.1", entrypoint.port
    named = {"client.pem": "proxy.pem", "client.key": "proxy.key", "tls.crt": "proxy-tls.pem", "tls.key": "proxy-tls.key"}
    for k in ("ca", "clientCert", "clientKey"):
        name = Path(cfg["kmip"][k]).name
        cfg["kmip"][k] = str(entrypoint.credentials / named.get(name, name))
    for k in ("cert", "key"):
        name = Path(cfg["tls"][k]).name
        cfg["tls"][k] = str(entrypoint.credentials / named.get(name, name))
    if "audit" in cfg:
        cfg["audit"]["file"] = str(tmp / "audit" / Path(cfg["audit"]["file"]).name)
    path = tmp / "proxy.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def start_proxy(config: Path, tmp: Path):
    """The real proxy on this config: (its process, its log file, its data port)."""
    port = int(yaml.safe_load(config.read_text())["listen"].rsplit(":", 1)[1])
    log = tmp / "proxy.log"
    with open(log, "wb") as f:
        proxy = subprocess.Popen(["java", "-jar", str(JAR), "proxy", "--config", str(config)], stdout=f,
                                 stderr=subprocess.STDOUT)
    return proxy, log, port


def test_the_stacks_policy_starts_a_proxy_on_the_bootstrapped_keys(entrypoint, tmp_path):
    config = stack_proxy_config(entrypoint, tmp_path)
    keys = subprocess.run(["java", "-jar", str(JAR), "keys", "--config", str(config),
                           *[c["key"] for c in yaml.safe_load(config.read_text())["collections"].values()]],
                          capture_output=True, text=True, timeout=120)
    assert keys.returncode == 0, keys.stdout + keys.stderr
    assert keys.stdout.count("| Active") == 3 and {"AES", "ARIA"} <= set(keys.stdout.split()), keys.stdout

    proxy, log, port = start_proxy(config, tmp_path)
    try:
        def listening():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return True
            except OSError:
                return False
        wait_for("the proxy listening (its policy validated against the KMS)", listening, proxy, timeout=60)
        # the start-up line comes just after the port opens (a fresh clone once read the log in between)
        wait_for("the proxy's start-up line", lambda: "collection(s)" in log.read_text(), proxy, timeout=30)
        text = log.read_text()
        assert "encrypting 3 collection(s)" in text and "3DES" in text, text
        # the stack's healthcheck asks /readyz: with no mongos behind it, the proxy is alive, not ready
        admin = int(yaml.safe_load(config.read_text())["admin"].rsplit(":", 1)[1])
        wait_for("the admin listener", lambda: admin_status(admin, "/healthz") == 200, proxy, timeout=30)
        status, body = admin_get(admin, "/readyz")
        assert status == 503 and "upstream" in body and "unreachable" in body, body
        # its listener speaks TLS with the certificate the kms service issued, trusted through its CA
        ctx = ssl.create_default_context(cafile=str(entrypoint.credentials / "ca.pem"))
        with socket.create_connection(("127.0.0.1", port)) as raw, \
                ctx.wrap_socket(raw, server_hostname="localhost") as s:
            assert s.version() in ("TLSv1.3", "TLSv1.2")
    finally:
        proxy.terminate()
        proxy.wait(timeout=15)


def test_the_kubernetes_configmaps_policy_starts_a_proxy_on_the_bootstrapped_keys(entrypoint, tmp_path):
    """deploy/kubernetes/configmap.yaml's proxy.yaml (its Secrets' file names mapped to the files the
    kms entrypoint hands over): its policy, limits and audit trail start a real proxy."""
    manifest = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "configmap.yaml").read_text())
    config = stack_proxy_config(entrypoint, tmp_path, manifest["data"]["proxy.yaml"])
    proxy, log, port = start_proxy(config, tmp_path)
    try:
        wait_for("the proxy's start-up line", lambda: "collection(s)" in log.read_text(), proxy, timeout=90)
        text = log.read_text()
        assert "encrypting 2 collection(s)" in text, text
        assert re.search(rf"audit trail: \S+ of instance \S+-{port} ", text), text
        admin = int(yaml.safe_load(config.read_text())["admin"].rsplit(":", 1)[1])
        wait_for("the admin listener", lambda: admin_status(admin, "/healthz") == 200, proxy, timeout=30)
    finally:
        proxy.terminate()
        proxy.wait(timeout=15)


def test_sigterm_stops_it_and_a_restart_keeps_the_certificates(entrypoint):
    ca = (entrypoint.kms_dir / "ca.pem").read_bytes()
    assert entrypoint.stop() is not None
    assert not entrypoint.ready.exists(), "a stopped KMS is not ready"
    entrypoint.start()
    assert (entrypoint.kms_dir / "ca.pem").read_bytes() == ca, "certificates are made at first start only"
    assert "already initialized" in entrypoint.output()
    entrypoint.stop()
