"""A key named twice anywhere in the config file. YAML loaders keep the last one without a word, so
two entries for dup.people, or ssn twice under fields:, left the first entry's fields unencrypted.
The real proxy refuses such a file: at start with exit code 2 and one line naming the file, the
line and the key; on a reload with an ERROR line, the previous policy staying in force."""
import signal
import subprocess

import pytest

from conftest import JAR, EncryptingProxy, client, free_port


def start(cfg):
    return subprocess.run(["java", "-jar", str(JAR), "proxy", "--config", str(cfg)], capture_output=True, text=True,
                          timeout=60)


def duplicate(cfg, line, key, mapping_line):
    return (f"fle-proxy: {cfg}: line {line}: duplicate key '{key}' in the mapping that starts at line {mapping_line}; "
            "YAML would keep only the last value, so the file is refused (name each key once)")


def test_the_proxy_does_not_start_with_a_key_named_twice(tmp_path, backend, kms):
    aes = kms.keys["AES-256"]
    head = (f"listen: 127.0.0.1:{free_port()}\nupstream: 127.0.0.1:{backend.port}\n" + kms.kmip_yaml()
            + "envelopeSubtype: 0\ncollections:\n")
    first = head.count("\n") + 1  # the line of the first collection
    cfg = tmp_path / "dup.yaml"
    cases = [
        (f"  dup.people: {{ key: {aes}, fields: [ssn] }}\n  dup.people: {{ key: {aes}, fields: [name] }}\n",
         first + 1, "dup.people", first),
        (f"  dup.people:\n    key: {aes}\n    fields:\n      ssn: {{}}\n      name: {{}}\n      ssn: {{}}\n",
         first + 5, "ssn", first + 3),
    ]
    for body, line, key, mapping_line in cases:
        cfg.write_text(head + body)
        r = start(cfg)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().splitlines() == [duplicate(cfg, line, key, mapping_line)]


@pytest.mark.parametrize("namespace, why", [
    ("hr.*", "namespaces are literal names, never patterns"),
    ("h/r.people", "which MongoDB does not allow in database names"),
    ("hr.system.users", "'system.' are MongoDB's own"),
])
def test_the_proxy_does_not_start_with_a_namespace_mongodb_cannot_hold(tmp_path, kms, namespace, why):
    cfg = tmp_path / "ns.yaml"
    cfg.write_text(f"listen: 127.0.0.1:{free_port()}\nupstream: 127.0.0.1:{free_port()}\n" + kms.kmip_yaml()
                   + f"collections:\n  '{namespace}': {{ key: {kms.keys['AES-256']}, fields: \"*\" }}\n")
    r = start(cfg)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fle-proxy: {cfg}: collections.{namespace}: ") and why in lines[0], lines


def test_a_reload_with_a_key_named_twice_is_not_applied(workdir, backend, kms):
    aes = kms.keys["AES-256"]
    people = f"  dup.people: {{ key: {aes}, fields: [ssn] }}\n"
    raw = client(f"mongodb://127.0.0.1:{backend.port}")
    raw.dup.people.drop()
    p = EncryptingProxy(workdir, backend.port, kms, people, name="proxy-dup").start()
    first = p.config.read_text().count("\n")  # the line of the first (and only) collection
    try:
        with client(p.uri()) as c:
            cases = [
                # applied, the second entry would have left ssn unencrypted
                (people + f"  dup.people: {{ key: {aes}, fields: [name] }}\n", first + 1, "dup.people", first),
                (f"  dup.people:\n    key: {aes}\n    fields:\n      name: {{}}\n      ssn: {{}}\n      name: {{}}\n",
                 first + 5, "name", first + 3),
            ]
            for i, (body, line, key, mapping_line) in enumerate(cases):
                p.mark_log()
                p.write(body)
                p.proc.send_signal(signal.SIGHUP)
                lines = p.new_log_lines("keeping the previous policy", timeout=20)
                assert lines and " ERROR " in lines[0], p.log_text()[-2000:]
                # SIGHUP, or the file watch if it saw the change first
                assert "failed, keeping the previous policy: " + duplicate(p.config, line, key, mapping_line)[
                    len("fle-proxy: "):] in lines[0], lines[0]
                assert not p.new_log_lines("policy reloaded", timeout=0)

                # the previous policy: ssn sealed, name as sent
                c.dup.people.insert_one({"_id": i, "ssn": "123-45-6789", "name": "Ada"})
                stored = raw.dup.people.find_one({"_id": i})
                assert isinstance(stored["ssn"], bytes) and stored["ssn"][0] == 0x82 and stored["name"] == "Ada"
    finally:
        p.stop()
        raw.dup.people.drop()
        raw.close()
