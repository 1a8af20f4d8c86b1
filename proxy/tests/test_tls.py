"""TLS on the client side and to the upstream, with the real jar and certificates made here.

Upstream TLS is tested by chaining two proxies: B (upstreamTls) → A (tls) → embedded backend."""
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time

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
    lines = tls_proxy.new_log_lines("does not speak TLS")
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


def chain(workdir, backend, pki, a_cert, a_ca=None, server_name=None, name="chain"):
    ca, other = pki
    directory = (other if a_ca == "other" else ca).dir
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


def test_certificates_reload_without_dropping_connections(workdir, backend, pki):
    ca, _ = pki
    live = workdir / "pki-live"
    live.mkdir(exist_ok=True)
    for ext in ("pem", "key"):
        shutil.copy(ca.dir / f"proxy.{ext}", live / f"proxy.{ext}")
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
