"""TLS on the client side and to the upstream, with the real jar and certificates made here.

Upstream TLS is tested by chaining two proxies: B (upstreamTls) → A (tls) → embedded backend."""
import os
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request

import pytest
from cryptography import x509
from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

from conftest import JAR, ROOT, ProxyProcess, client, free_port, wait_for_port
from pki import Pki

MONGOSH = ROOT / ".tools" / "node_modules" / ".bin" / "mongosh"


@pytest.fixture(scope="module")
def pki(workdir):
    ca = Pki(workdir / "pki", "test CA")
    ca.issue("proxy", "proxy", names=["127.0.0.1", "localhost"])
    ca.issue("proxy2", "proxy", names=["127.0.0.1", "localhost"])
    ca.issue("app", "app", client=True)
    ca.issue("wronghost", "evil", names=["evil.example"])
    ca.issue("expired", "proxy", names=["127.0.0.1"], expired=True)
    other = Pki(workdir / "pki-other", "other CA")
    other.issue("untrusted", "proxy", names=["127.0.0.1"])
    return ca, other


def tls_yaml(directory, name, client_ca=None, auth="none"):
    extra = f"tls:\n  cert: {directory}/{name}.pem\n  key: {directory}/{name}.key\n"
    if client_ca:
        extra += f"  clientCA: {client_ca}\n  clientAuth: {auth}\n"
    return extra


def crud(c, coll="x"):
    db = c.tls
    db[coll].drop()
    db[coll].insert_one({"_id": 1, "name": "ann"})
    db[coll].update_one({"_id": 1}, {"$set": {"name": "bob"}})
    assert db[coll].find_one({"_id": 1}) == {"_id": 1, "name": "bob"}
    assert db[coll].delete_one({"_id": 1}).deleted_count == 1


@pytest.fixture(scope="module")
def tls_proxy(workdir, backend, pki):
    ca, _ = pki
    p = ProxyProcess(workdir, backend.port, name="proxy-tls", extra=tls_yaml(ca.dir, "proxy")).start()
    yield p
    p.stop()


def test_pymongo_runs_crud_over_tls_and_a_plaintext_client_is_refused(tls_proxy, pki):
    ca, _ = pki
    with client(tls_proxy.uri(), tls=True, tlsCAFile=str(ca.ca_file)) as c:
        crud(c)
    tls_proxy.mark_log()
    with client(tls_proxy.uri(), serverSelectionTimeoutMS=1500) as plain:
        with pytest.raises(ServerSelectionTimeoutError):
            plain.admin.command("ping")
    lines = tls_proxy.new_log_lines("does not speak TLS", timeout=20)  # both cores may be busy
    # what a plaintext client sent (Netty's message holds a hex dump of it) is never logged
    assert lines and not any("not an SSL/TLS record" in l for l in tls_proxy.new_log_lines("TLS", timeout=0)), lines
    with client(tls_proxy.uri(), tls=True, tlsCAFile=str(ca.ca_file)) as c:
        assert c.admin.command("ping")["ok"] == 1.0  # and it goes on serving
    assert "TLS by BoringSSL" in tls_proxy.log_text() or "TLS by the JDK" in tls_proxy.log_text()


def test_mongosh_runs_crud_over_tls(tls_proxy, pki):
    assert MONGOSH.exists(), f"{MONGOSH} is missing: `make mongosh` installs it (make test does)"
    ca, _ = pki
    script = ("db.getSiblingDB('tls').sh.deleteMany({}); db.getSiblingDB('tls').sh.insertOne({_id: 1, v: 'from mongosh'});"
              "db.getSiblingDB('tls').sh.updateOne({_id: 1}, {$set: {v: 'updated'}});"
              "print(JSON.stringify(db.getSiblingDB('tls').sh.findOne({_id: 1})));")
    r = subprocess.run([str(MONGOSH), f"{tls_proxy.uri()}/?tls=true&tlsCAFile={ca.ca_file}", "--quiet", "--eval", script],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '{"_id":1,"v":"updated"}' in r.stdout, r.stdout


def test_client_certificates_required(workdir, backend, pki):
    ca, _ = pki
    p = ProxyProcess(workdir, backend.port, name="proxy-mtls",
                     extra=tls_yaml(ca.dir, "proxy", client_ca=ca.ca_file, auth="required")).start()
    try:
        p.mark_log()
        with client(p.uri(), tls=True, tlsCAFile=str(ca.ca_file), serverSelectionTimeoutMS=1500) as anonymous:
            with pytest.raises(ServerSelectionTimeoutError):
                anonymous.admin.command("ping")
        assert p.new_log_lines("presented no certificate"), p.log_text()[-2000:]
        with client(p.uri(), tls=True, tlsCAFile=str(ca.ca_file),
                    tlsCertificateKeyFile=str(ca.dir / "app.both.pem")) as app:
            crud(app, "mtls")
    finally:
        p.stop()


class BareTlsServer:
    """Serves a certificate the proxy refuses to serve (an expired one) and does nothing but handshakes."""

    def __init__(self, cert, key):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(str(cert), str(key))
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # stopped
            try:
                with self.ctx.wrap_socket(conn, server_side=True) as s:
                    s.recv(1)
            except (ssl.SSLError, OSError):
                pass  # the peer refused the certificate: what the test wants

    def stop(self):
        self.sock.close()


def chain(workdir, backend, pki, a_cert, a_ca=None, server_name=None, name="chain"):
    ca, other = pki
    directory = (other if a_ca == "other" else ca).dir
    if a_cert == "expired":
        a = BareTlsServer(directory / "expired.pem", directory / "expired.key")
    else:
        a = ProxyProcess(workdir, backend.port, name=f"{name}-a", extra=tls_yaml(directory, a_cert)).start()
    upstream_tls = f"upstreamTls:\n  ca: {ca.ca_file}\n"
    if server_name:
        upstream_tls += f"  serverName: {server_name}\n"
    b = ProxyProcess(workdir, a.port, name=f"{name}-b", extra=upstream_tls).start()
    return a, b


@pytest.mark.parametrize("a_cert,a_ca,reason", [
    ("wronghost", None, "does not name this host"),
    ("untrusted", "other", "is not trusted"),
    ("expired", None, "has expired"),
])
def test_a_failed_upstream_handshake_is_9720001_with_its_reason(workdir, backend, pki, a_cert, a_ca, reason):
    a, b = chain(workdir, backend, pki, a_cert, a_ca, name=f"chain-{a_cert}")
    try:
        b.mark_log()
        with client(b.uri(), serverSelectionTimeoutMS=2000) as c:
            with pytest.raises((ServerSelectionTimeoutError, OperationFailure)) as e:
                c.admin.command("ping")
        assert "9720001" in str(e.value) or "FleProxyUpstreamUnavailable" in str(e.value), str(e.value)
        assert reason in str(e.value), str(e.value)
        lines = b.new_log_lines(reason)
        assert lines and all(reason in l for l in lines), b.log_text()[-2000:]
    finally:
        b.stop()
        a.stop()


def test_upstream_tls_works_and_server_name_overrides_the_host(workdir, backend, pki):
    for a_cert, server_name in (("proxy", None), ("wronghost", "evil.example")):
        a, b = chain(workdir, backend, pki, a_cert, server_name=server_name, name=f"chain-ok-{a_cert}")
        try:
            with client(b.uri()) as c:
                crud(c, f"chained_{a_cert}")
        finally:
            b.stop()
            a.stop()


def peer_serial(port, ca_file):
    ctx = ssl.create_default_context(cafile=str(ca_file))
    with socket.create_connection(("127.0.0.1", port)) as raw, ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
        return x509.load_der_x509_certificate(s.getpeercert(binary_form=True)).serial_number


def live_copy(workdir, ca, name):
    """A directory of its own with a copy of proxy.pem and proxy.key, for a test to change under the proxy."""
    live = workdir / name
    live.mkdir(exist_ok=True)
    for ext in ("pem", "key"):
        shutil.copy(ca.dir / f"proxy.{ext}", live / f"proxy.{ext}")
    return live


def test_certificates_reload_without_dropping_connections(workdir, backend, pki):
    ca, _ = pki
    live = live_copy(workdir, ca, "pki-live")
    p = ProxyProcess(workdir, backend.port, name="proxy-reload", extra=tls_yaml(live, "proxy")).start()
    try:
        first = peer_serial(p.port, ca.ca_file)
        with client(p.uri(), tls=True, tlsCAFile=str(ca.ca_file)) as c:
            crud(c, "before_reload")
            p.mark_log()
            for ext in ("key", "pem"):
                shutil.copy(ca.dir / f"proxy2.{ext}", live / f"proxy.{ext}")
            p.proc.send_signal(signal.SIGHUP)
            assert p.new_log_lines("TLS certificate reloaded", timeout=20), p.log_text()[-2000:]
            assert peer_serial(p.port, ca.ca_file) != first  # new connections: the new certificate
            crud(c, "after_reload")  # the pooled connections opened before it go on
    finally:
        p.stop()


def run_to_exit(cfg):
    """(exit code, stderr lines) of a proxy that is expected to refuse to start."""
    r = subprocess.run(["java", "-jar", str(JAR), "proxy", "--config", str(cfg)], capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stderr.strip().splitlines()


@pytest.mark.parametrize("cert,key,problem", [
    ("proxy", "proxy2", "does not belong to the certificate"),
    ("expired", "expired", "has expired: valid until"),
])
def test_a_mismatched_pair_or_an_expired_certificate_stops_the_start(workdir, pki, cert, key, problem):
    ca, _ = pki
    cfg = workdir / f"refused-{cert}-{key}.yaml"
    cfg.write_text(f"listen: 127.0.0.1:{free_port()}\nupstream: 127.0.0.1:{free_port()}\n"
                   f"tls:\n  cert: {ca.dir}/{cert}.pem\n  key: {ca.dir}/{key}.key\n")
    code, lines = run_to_exit(cfg)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"fle-proxy: tls: ") and problem in lines[0] and f"{cert}.pem" in lines[0], lines
    assert "PRIVATE KEY" not in lines[0]
    # the upstream's client pair is checked the same way
    cfg.write_text(f"listen: 127.0.0.1:{free_port()}\nupstream: 127.0.0.1:{free_port()}\n"
                   f"upstreamTls:\n  ca: {ca.ca_file}\n  cert: {ca.dir}/{cert}.pem\n  key: {ca.dir}/{key}.key\n")
    code, lines = run_to_exit(cfg)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("fle-proxy: upstreamTls: ") and problem in lines[0], lines


def expiry_gauge(admin_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    series = [l for l in text.splitlines() if l.startswith("fleproxy_tls_certificate_expiry_timestamp_seconds{")]
    assert len(series) == 1 and 'certificate="listener"' in series[0], series
    return float(series[0].rsplit(" ", 1)[1])


def test_a_reloaded_pair_that_does_not_match_leaves_the_old_certificate_in_force(workdir, backend, pki):
    ca, _ = pki
    live = live_copy(workdir, ca, "pki-mismatch")
    admin_port = free_port()
    p = ProxyProcess(workdir, backend.port, name="proxy-mismatch",
                     extra=tls_yaml(live, "proxy") + f"admin: 127.0.0.1:{admin_port}\n").start()
    try:
        wait_for_port(admin_port, p.proc)
        first = peer_serial(p.port, ca.ca_file)
        not_after = x509.load_pem_x509_certificate((ca.dir / "proxy.pem").read_bytes()).not_valid_after_utc
        assert abs(expiry_gauge(admin_port) - not_after.timestamp()) < 1
        with client(p.uri(), tls=True, tlsCAFile=str(ca.ca_file)) as c:
            crud(c, "before_mismatch")
            p.mark_log()
            # another certificate without its key, put in place in one step (no half-written file);
            # the file watcher (every 2 s) finds it, no SIGHUP, so exactly one reload is attempted
            shutil.copy(ca.dir / "proxy2.pem", live / "proxy.pem.new")
            os.replace(live / "proxy.pem.new", live / "proxy.pem")
            errors = p.new_log_lines("ERROR", timeout=20)
            assert errors, p.log_text()[-2000:]
            time.sleep(5)  # two more checks of the files: nothing more is tried or said
            errors = p.new_log_lines("ERROR", timeout=0)
            assert len(errors) == 1, errors
            assert "TLS reload (the certificate files changed) failed, keeping the previous certificate" in errors[0]
            assert "does not belong to the certificate" in errors[0] and "PRIVATE KEY" not in errors[0], errors
            assert not p.new_log_lines("TLS certificate reloaded", timeout=0)
            assert peer_serial(p.port, ca.ca_file) == first  # new connections: still the old certificate
            crud(c, "after_mismatch")
        with client(p.uri(), tls=True, tlsCAFile=str(ca.ca_file)) as fresh:
            crud(fresh, "fresh_after_mismatch")  # handshakes work
        assert abs(expiry_gauge(admin_port) - not_after.timestamp()) < 1
    finally:
        p.stop()


def test_a_listener_off_loopback_needs_tls_or_says_why(workdir, pki):
    ca, _ = pki
    port = free_port()
    cfg = workdir / "open.yaml"
    cfg.write_text(f"listen: 0.0.0.0:{port}\nupstream: 127.0.0.1:{free_port()}\n")
    r = subprocess.run(["java", "-jar", str(JAR), "proxy", "--config", str(cfg)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a loopback address and there is no tls: section" in lines[0], lines
    for extra in ("allowPlaintextListen: true\n", tls_yaml(ca.dir, "proxy")):
        cfg.write_text(f"listen: 0.0.0.0:{port}\nupstream: 127.0.0.1:{free_port()}\n" + extra)
        proc = subprocess.Popen(["java", "-jar", str(JAR), "proxy", "--config", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
