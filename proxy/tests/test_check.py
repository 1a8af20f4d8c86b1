"""`fle-proxy.jar check` (issue 27) on the real jar, the real PyKMIP server and the embedded backend:
a good config is exit 0 with the policy's algorithms from the KMS and the upstream identified; an
unknown key, an unreachable upstream or KMS is exit 2 saying which; a revoked key is a WARN."""
import subprocess
import uuid

from conftest import AES_256, ARIA_256, JAR, free_port


def check(config, *extra, timeout=120):
    return subprocess.run(["java", "-jar", str(JAR), "check", "--config", str(config), *extra],
                          capture_output=True, text=True, timeout=timeout)


def write(tmp_path, kms, upstream_port, collections, kmip=None):
    config = tmp_path / "check.yaml"
    config.write_text(f"listen: 127.0.0.1:{free_port()}\nupstream: 127.0.0.1:{upstream_port}\n"
                      + (kmip if kmip is not None else kms.kmip_yaml()) + "envelopeSubtype: 0\ncollections:\n"
                      + collections)
    return config


POLICY = (f"  hr.people:\n    key: {AES_256}\n    previousKeys: [{ARIA_256}]\n"
          "    fields: {ssn: {deterministic: true}, name: {}}\n"
          f"  ycsb.usertable: {{key: {ARIA_256}, fields: '*'}}\n")


def rows(out):
    """The policy table's rows (not its header) as lists of cells, by namespace."""
    table = [[c.strip() for c in line.split("|")] for line in out.splitlines() if " | " in line]
    return {r[0]: r for r in table[1:]}


def test_a_good_config_is_exit_0_with_the_keys_algorithms_and_the_upstream_identified(tmp_path, kms, backend):
    r = check(write(tmp_path, kms, backend.port, POLICY))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert any(l.startswith(f"ok    kms: 127.0.0.1:{kms.port} answers") for l in lines), r.stdout
    assert f"ok    key {AES_256}: AES-256, Active (key of hr.people)" in lines, r.stdout
    assert (f"ok    key {ARIA_256}: ARIA-256, Active (previous key of hr.people; key of ycsb.usertable)" in lines
            or f"ok    key {ARIA_256}: ARIA-256, Active (key of ycsb.usertable; previous key of hr.people)" in lines), \
        r.stdout
    assert f"ok    upstream: 127.0.0.1:{backend.port} is a standalone server, maxWireVersion 13, version 5.0.0" in lines
    t = rows(r.stdout)
    assert t["hr.people"] == ["hr.people", AES_256, "AES-256", "AES_GCM (default)", "name, ssn (det)", ARIA_256, "deny"]
    assert t["ycsb.usertable"][2:4] == ["ARIA-256", "ARIA_GCM (default)"]
    assert lines[-1] == "check: configuration ok"
    assert not any(l.startswith(("FAIL", "WARN")) for l in lines)


def test_the_client_identity_may_be_pkcs12(tmp_path, kms, backend):
    kmip = (f"kmip:\n  host: 127.0.0.1\n  port: {kms.port}\n  ca: {kms.dir}/ca.pem\n"
            f"  clientPkcs12: {kms.dir}/proxy.p12\n"
            f"  clientPkcs12Password: \"{(kms.dir / 'proxy.p12.password').read_text().strip()}\"\n")
    r = check(write(tmp_path, kms, backend.port, POLICY, kmip=kmip))
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(l.startswith(f"ok    kmip: certificate {kms.dir}/proxy.p12 ") for l in r.stdout.splitlines()), r.stdout


def test_an_unknown_key_is_exit_2_naming_the_key(tmp_path, kms, backend):
    unknown = str(uuid.uuid4())
    r = check(write(tmp_path, kms, backend.port, POLICY + f"  hr.typo: {{key: {unknown}, fields: [ssn]}}\n"))
    assert r.returncode == 2, r.stdout + r.stderr
    fails = [l for l in r.stdout.splitlines() if l.startswith("FAIL")]
    assert len(fails) == 1 and "collections.hr.typo" in fails[0] and f"no key named {unknown}" in fails[0], r.stdout
    assert rows(r.stdout)["hr.typo"][2] == "not in the KMS"
    assert rows(r.stdout)["hr.people"][2] == "AES-256"  # the others are still checked
    assert r.stdout.splitlines()[-1] == "check: 1 FAIL, 0 WARN"


def test_an_unreachable_upstream_is_exit_2(tmp_path, kms):
    port = free_port()
    r = check(write(tmp_path, kms, port, POLICY))
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"FAIL  upstream: cannot connect to 127.0.0.1:{port} (within upstreamConnectTimeoutMs 5000): " \
           "Connection refused" in r.stdout.splitlines(), r.stdout


def test_an_unreachable_kms_is_exit_2_and_the_algorithms_unknown(tmp_path, kms, backend):
    kmip = kms.kmip_yaml().replace(f"port: {kms.port}", f"port: {free_port()}")
    r = check(write(tmp_path, kms, backend.port, POLICY, kmip=kmip))
    assert r.returncode == 2, r.stdout + r.stderr
    assert any(l.startswith("FAIL  kms: ") and "unreachable" in l for l in r.stdout.splitlines()), r.stdout
    assert rows(r.stdout)["hr.people"][2:4] == ["?", "?"]
    assert any(l.startswith("ok    upstream: ") for l in r.stdout.splitlines()), r.stdout


def test_offline_asks_neither_the_kms_nor_the_upstream(tmp_path, kms):
    kmip = kms.kmip_yaml().replace(f"port: {kms.port}", f"port: {free_port()}")
    r = check(write(tmp_path, kms, free_port(), POLICY, kmip=kmip), "--offline")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--    kms, upstream: not asked (--offline)" in r.stdout.splitlines()
    assert rows(r.stdout)["hr.people"][2] == "?"


def test_a_revoked_key_is_a_warning_and_shown_in_the_table(tmp_path, kms, backend):
    key = str(uuid.uuid4())
    kms.cli("create", "--dir", kms.dir, "--alg", "AES", "--bits", "128", "--name", key, "--activate")
    kms.cli("revoke", "--dir", kms.dir, key)
    r = check(write(tmp_path, kms, backend.port, f"  old.stuff: {{key: {key}, fields: [a]}}\n"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert f"ok    key {key}: AES-128, Deactivated (key of old.stuff)" in lines, r.stdout
    assert any(l.startswith("WARN  ") and f"key {key} is Deactivated, so writes to old.stuff are refused" in l
               for l in lines), r.stdout
    assert rows(r.stdout)["old.stuff"][2] == "AES-128 (Deactivated)"
    assert lines[-1] == "check: configuration ok, 1 WARN"
