"""The audit trail (docs/access.md, "The audit trail"): written under load by the real proxy (8
clients, 10,000 requests on an encrypted collection, rotated several times), checked by
`fle-proxy audit verify` with the key from the KMS, and a removed, a changed and an inserted line
each found by file and line number. No value of a policy field is ever in it."""
import json
import subprocess
import threading
import time

import pytest

from conftest import JAR, EncryptingProxy, client

SSN = "321-54-9876"
CLIENTS, PER_CLIENT = 8, 1250


class AuditingProxy(EncryptingProxy):
    def __init__(self, tmp, upstream_port, kms, collections, trail, name, syslog_port):
        self.trail, self.syslog_port = trail, syslog_port
        super().__init__(tmp, upstream_port, kms, collections, name=name)

    def write(self, collections):
        super().write(collections)
        self.config.write_text(self.config.read_text() + f"audit:\n  file: {self.trail}\n"
                               f"  key: {self.kms.keys['AES-256']}\n  rotateBytes: 400000\n"
                               f"  syslog: 127.0.0.1:{self.syslog_port}\n")


class SyslogReceiver:
    """A UDP syslog receiver that keeps what it is sent."""

    def __init__(self):
        import socket
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.messages = []
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        import socket
        while self.running:
            try:
                self.messages.append(self.sock.recv(65536).decode())
            except socket.timeout:
                continue

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


@pytest.fixture(scope="module")
def syslog():
    r = SyslogReceiver()
    yield r
    r.close()


@pytest.fixture(scope="module")
def trail(workdir, backend, kms, syslog):
    path = workdir / "audit" / "audit.log"
    key = kms.keys["AES-256"]
    p = AuditingProxy(workdir, backend.port, kms, f"  aud.people: {{ key: {key}, fields: {{ ssn: {{}} }} }}\n",
                      path, name="proxy-audit", syslog_port=syslog.port).start()
    yield p, path
    p.stop()


def files(path):
    return sorted(path.parent.glob(path.name + ".*")) + [path]


def lines(path):
    return sum(len(f.read_text().splitlines()) for f in files(path) if f.exists())


def verify(proxy, paths):
    r = subprocess.run(["java", "-jar", str(JAR), "audit", "verify", "--config", str(proxy.config), *map(str, paths)],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def test_a_trail_written_under_load_verifies_and_every_tampering_is_found(trail, tmp_path, syslog):
    proxy, path = trail
    errors = []

    def work(n):
        try:
            with client(proxy.uri()) as c:
                coll = c.aud.people
                for i in range(PER_CLIENT):
                    _id = n * PER_CLIENT + i
                    if i % 3 == 0:
                        coll.insert_one({"_id": _id, "ssn": SSN, "k": n})
                    elif i % 3 == 1:
                        coll.find_one({"_id": _id - 1})
                    else:
                        coll.update_one({"_id": _id - 2}, {"$set": {"ssn": SSN, "k": i}})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    deadline = time.monotonic() + 60
    while lines(path) < CLIENTS * PER_CLIENT and time.monotonic() < deadline:
        time.sleep(0.2)
    trail_files = files(path)
    assert len(trail_files) >= 3, trail_files  # rotated at least twice
    code, out = verify(proxy, trail_files)
    assert code == 0 and out.startswith("ok "), out
    assert int(out.split()[1]) >= CLIENTS * PER_CLIENT
    text = "".join(f.read_text() for f in trail_files)
    assert SSN not in text
    first = json.loads(trail_files[0].read_text().splitlines()[0])
    assert first["seq"] == 1 and first["ns"] == "aud.people" and first["fields"]["ssn"] in ("written", "revealed")
    assert {"t", "conn", "identity", "client", "cmd", "code", "mac"} <= set(first)

    # the same lines went to syslog (UDP may lose some under load; the file is the trail of record)
    assert syslog.messages and syslog.messages[0].startswith("<110>1 ") and ' fle-proxy - audit - {"seq":' in syslog.messages[0]
    assert SSN not in "".join(syslog.messages)

    middle = trail_files[1]
    original = middle.read_text().splitlines()

    def tampered(new_lines, expect):
        copy = tmp_path / middle.name
        copy.write_text("\n".join(new_lines) + "\n")
        code, out = verify(proxy, [trail_files[0], copy] + trail_files[2:])
        assert code == 1 and expect in out, out

    tampered(original[:99] + original[100:], f"{middle.name} line 100: its number is")
    edited = list(original)
    edited[49] = edited[49].replace('"code":0', '"code":1')
    tampered(edited, f"{middle.name} line 50: its MAC does not match")
    inserted = original[:10] + [original[10].replace('"cmd":"', '"cmd":"x')] + original[10:]
    tampered(inserted, f"{middle.name} line 11: its MAC does not match")
