"""The kms CLI against a real pykmip-server: init, bootstrap (idempotent), list, the key life cycle,
and the Java resolver getting exactly the bytes PyKMIP's own client gets."""
import hashlib
import json
import os
import signal
import stat
import subprocess
import time

from conftest import JAR, Server, free_port, kms

PAPER = {"89d6d529-a2fe-31dd-ae60-3cb35458dcc0": ("AES", 256),
         "da6fd698-4681-3bb5-88ad-d1d9d68b1df6": ("ARIA", 256),
         "93a7f87f-458c-31be-ad16-d5dfa2fc1bae": ("3DES", 192)}


def rows(table: str) -> dict:
    """UUID → (algorithm, bits, state) from a kms table."""
    out = {}
    for line in table.strip().splitlines()[2:]:
        name, alg, bits, state = [c.strip() for c in line.split("|")]
        out[name] = (alg, int(bits), state)
    return out


def test_init_is_idempotent_and_keeps_secrets_private(kms_server):
    d = kms_server.dir
    before = (d / "ca.pem").read_bytes()
    r = kms("init", "--dir", d)
    assert "already initialized" in r.stdout
    assert (d / "ca.pem").read_bytes() == before
    for key in ("ca.key", "server.key", "admin.key", "proxy.key", "proxy.p12", "proxy.p12.password"):
        assert stat.S_IMODE(os.stat(d / key).st_mode) == 0o600, key
    conf = (d / "server.conf").read_text()
    assert "logging_level=INFO" in conf and "auth_suite=TLS1.2" in conf and "enable_tls_client_auth=True" in conf


def test_the_server_certificate_names_every_address_the_proxy_connects_to(tmp_path):
    """The proxy checks the KMS's certificate against kmip.host: the tests connect to 127.0.0.1
    (an IP SAN), the Compose stack to the host `kms` (deploy/proxy/proxy.yaml); --san adds more."""
    import ipaddress

    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    kms("init", "--dir", tmp_path, "--port", free_port(), "--san", "kms.internal", "--san", "10.1.2.3")
    cert = x509.load_pem_x509_certificate((tmp_path / "server.pem").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(san.get_values_for_type(x509.DNSName)) == {"localhost", "kms", "kms.internal"}
    assert set(san.get_values_for_type(x509.IPAddress)) == {ipaddress.ip_address("127.0.0.1"),
                                                            ipaddress.ip_address("10.1.2.3")}
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku


def test_bootstrap_twice_creates_the_keys_once(kms_server):
    d = kms_server.dir
    first = rows(kms("bootstrap", "--dir", d).stdout)
    second = rows(kms("bootstrap", "--dir", d).stdout)
    assert first == second
    assert len(first) == 7
    for uuid, (alg, bits) in PAPER.items():
        assert first[uuid] == (alg, bits, "ACTIVE")
    extra = json.loads((d / "bootstrap.json").read_text())
    assert {first[extra[label]][:2] for label in extra} == {("SEED", 128), ("LEA", 256), ("AES", 128), ("ARIA", 128)}
    listed = rows(kms("list", "--dir", d).stdout)
    assert {k: v for k, v in listed.items() if k in first} == first
    assert len(listed) == len(first), "bootstrap made no extra objects"


def test_the_java_resolver_gets_the_bytes_pykmip_gets(kms_server, tmp_path):
    from fle_kms import admin
    from fle_kms.layout import KmsDir
    d = kms_server.dir
    keys = rows(kms("bootstrap", "--dir", d).stdout)
    client = admin.connect(KmsDir(d))
    try:
        expected = {name: hashlib.sha256(client.get(admin.resolve(client, name)).value).hexdigest()[:16]
                    for name in keys}
    finally:
        client.close()
    config = tmp_path / "proxy.yaml"
    config.write_text(f"""listen: 127.0.0.1:1
upstream: 127.0.0.1:2
kmip:
  host: 127.0.0.1
  port: {kms_server.port}
  ca: {d}/ca.pem
  clientCert: {d}/proxy.pem
  clientKey: {d}/proxy.key
""")
    r = subprocess.run(["java", "-jar", str(JAR), "keys", "--config", str(config), *keys],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    got = {}
    for line in r.stdout.strip().splitlines()[1:]:
        cols = [c.strip() for c in line.split("|")]
        got[cols[0]] = cols[5]
        alg = {"TRIPLE_DES": "3DES"}.get(cols[1], cols[1])
        assert (alg, int(cols[2])) == keys[cols[0]][:2]
        assert cols[3] == "Active"
    assert got == expected


def test_the_key_life_cycle(kms_server):
    d = kms_server.dir
    created = rows(kms("create", "--dir", d, "--alg", "SEED", "--bits", "128").stdout)
    (name, (alg, bits, state)), = created.items()
    assert (alg, bits, state) == ("SEED", 128, "PRE_ACTIVE")
    assert rows(kms("activate", "--dir", d, name).stdout)[name][2] == "ACTIVE"
    r = kms("destroy", "--dir", d, name, check=False)
    assert r.returncode == 1 and "is Active; revoke it first" in r.stderr
    assert rows(kms("revoke", "--dir", d, name).stdout)[name][2] == "DEACTIVATED"
    assert "destroyed key" in kms("destroy", "--dir", d, name).stdout
    r = kms("activate", "--dir", d, name, check=False)
    assert r.returncode == 1 and f"no key named {name}" in r.stderr


def test_bad_requests_say_what_is_wrong(kms_server, tmp_path):
    d = kms_server.dir
    r = kms("create", "--dir", d, "--alg", "3DES", "--bits", "128", check=False)
    assert r.returncode == 1 and "3DES keys are 192 bits, not 128" in r.stderr
    r = kms("create", "--dir", d, "--alg", "RC4", "--bits", "128", check=False)
    assert r.returncode == 1 and "unknown algorithm RC4" in r.stderr
    r = kms("list", "--dir", tmp_path / "nothing", check=False)
    assert r.returncode == 1 and "is not a KMS directory" in r.stderr


def test_serve_stops_on_sigterm_and_a_stopped_kms_is_reported(tmp_path):
    port = free_port()
    kms("init", "--dir", tmp_path, "--port", port)
    server = Server(tmp_path, port).start()
    t0 = time.monotonic()
    assert server.stop(timeout=30) is not None
    assert time.monotonic() - t0 < 30
    r = kms("list", "--dir", tmp_path, check=False)
    assert r.returncode == 1 and f"cannot reach the KMS at 127.0.0.1:{port}" in r.stderr
