"""The audit trail (docs/access.md, "The audit trail"): written under load by the real proxy (8
clients, 10,000 requests on an encrypted collection, rotated several times), checked by
`fle-proxy audit verify` with the key from the KMS, and a removed, a changed and an inserted line
each found by file and line number. No value of a policy field is ever in it. On a full disk no
request is answered without its whole line, and the proxy starts again on the cut trail."""
import json
import resource
import shutil
import subprocess
import threading
import time

import pytest
from pymongo.errors import OperationFailure

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
            # eight threads in one Python process share its GIL: a client whose monitor waits behind
            # the others' traffic on a busy machine needs longer than the default 5 s to find the
            # proxy (a fresh make test beside make demo timed out there)
            with client(proxy.uri(), serverSelectionTimeoutMS=60_000) as c:
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


# ---- a full disk: no answer without its line, and a start that goes on from a line cut short ----

AUDIT_UNAVAILABLE = 9720042
SMALL = 64 * 1024


class SmallDisk:
    """A directory that holds SMALL bytes: a tmpfs of that size (root here), else the proxy's files
    limited to that size (RLIMIT_FSIZE in the proxy process: the JVM ignores SIGXFSZ, so a write
    past it fails with EFBIG as a full disk's does with ENOSPC)."""

    def __init__(self, path):
        self.path = path
        path.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL}", "tmpfs", str(path)], capture_output=True)
        self.mounted = r.returncode == 0
        self.why_not = r.stderr.decode(errors="replace").strip()

    def grow(self):
        """Room again: the tmpfs made bigger in place (the rlimit is only set on the first start)."""
        if self.mounted:
            subprocess.run(["mount", "-o", "remount,size=4m", str(self.path)], check=True)

    def release(self):
        if self.mounted:
            subprocess.run(["umount", str(self.path)], check=True)
            self.mounted = False


class TrailProxy(EncryptingProxy):
    """A proxy whose trail is `trail`, started with its file size limited to `fsize` bytes (None: not)."""

    def __init__(self, tmp, upstream_port, kms, collections, trail, name):
        self.trail, self.fsize = trail, None
        super().__init__(tmp, upstream_port, kms, collections, name=name)

    def write(self, collections):
        super().write(collections)
        self.config.write_text(self.config.read_text() + f"audit:\n  file: {self.trail}\n"
                               f"  key: {self.kms.keys['AES-256']}\n")

    def start(self, wait=True):
        log = open(self.log_path, "ab")
        limit = self.fsize

        def limited():
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        # the log goes to a file of this process too: it must stay under the limit (it does: a few lines)
        self.proc = subprocess.Popen(["java", "-jar", str(self.jar), *self.args], stdout=log, stderr=subprocess.STDOUT,
                                     preexec_fn=limited)
        log.close()
        if wait:
            from conftest import wait_for_port
            try:
                wait_for_port(self.port, self.proc)
            except BaseException:
                self.stop()
                raise
        return self


def test_an_unacknowledged_write_has_its_line_before_it_goes_on(trail):
    """w: 0 gets no answer to hold: its line (code -1, no answer to name) is on file before the
    write is forwarded (issue 40: it had none)."""
    from pymongo import WriteConcern
    proxy, path = trail
    with client(proxy.uri()) as c:
        # (the embedded backend drops unacknowledged writes itself: what is checked is the trail)
        c.aud.get_collection("people", write_concern=WriteConcern(w=0)).insert_one({"_id": "w0", "ssn": SSN})
    deadline = time.monotonic() + 30
    while '"code":-1' not in "".join(f.read_text() for f in files(path) if f.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    recorded = [json.loads(line) for f in files(path) if f.exists() for line in f.read_text().splitlines()]
    unacknowledged = [r for r in recorded if r.get("cmd") == "insert" and r.get("code") == -1]
    assert unacknowledged and unacknowledged[-1]["fields"] == {"ssn": "written"}, recorded[-3:]


def whole_lines(path):
    data = path.read_bytes()
    return data.count(b"\n"), not data.endswith(b"\n") and len(data) > 0


def test_on_a_full_disk_every_answer_has_its_whole_line_and_a_restart_records_the_cut(workdir, backend, kms, tmp_path):
    disk = SmallDisk(tmp_path / "small")
    if not disk.mounted and not hasattr(resource, "RLIMIT_FSIZE"):
        pytest.skip(f"neither a tmpfs ({disk.why_not}) nor RLIMIT_FSIZE to fill the trail's disk with")
    trail = disk.path / "audit.log"
    key = kms.keys["AES-256"]
    proxy = TrailProxy(tmp_path, backend.port, kms, f"  aud.full: {{ key: {key}, fields: {{ ssn: {{}} }} }}\n",
                       trail, name="proxy-full-disk")
    proxy.fsize = None if disk.mounted else SMALL
    try:
        proxy.start()
        answered, withheld = 0, 0
        with client(proxy.uri(), retryReads=False, retryWrites=False) as c:
            coll = c.aud.full
            coll.insert_one({"_id": 1, "ssn": SSN})
            answered += 1
            for _ in range(5000):  # ~300 bytes a line: the disk is full long before
                try:
                    assert coll.find_one({"_id": 1})["ssn"] == SSN
                    answered += 1
                except OperationFailure as e:
                    assert e.code == AUDIT_UNAVAILABLE, e.details
                    withheld += 1
                    if withheld >= 20:
                        break
        assert withheld >= 20, f"the trail never filled ({answered} answered)"
        assert answered > 100, answered
        lines, cut = whole_lines(trail)
        # one client, one request at a time: each line is a batch of its own, so the lines on file are
        # exactly the answers (the line that did not fit is at most a fragment: its answer was withheld)
        assert lines == answered, (lines, answered, cut)
        assert proxy.alive(), "a full disk refuses requests; it does not stop the proxy"
        assert "cannot be written" in proxy.log_text()
        proxy.stop()

        # with room again it starts, goes on from the last whole line and records the cut
        disk.grow()
        proxy.fsize = None
        proxy.start()
        with client(proxy.uri()) as c:
            assert c.aud.full.find_one({"_id": 1})["ssn"] == SSN
        proxy.stop()
        assert "ended in a line cut short" in proxy.log_text() or not cut
        code, out = verify(proxy, [trail])
        assert code == 0, out
        total = answered + 1 + (1 if cut else 0)
        assert out.startswith(f"ok {total} lines"), out
        if cut:
            fragment = trail.read_bytes().split(b"\n")[lines]
            assert f"; cut: {trail} line {lines + 1} ({len(fragment)} bytes), recorded at seq {answered + 1}" in out, out
            record = json.loads(trail.read_bytes().split(b"\n")[lines + 1])
            assert record["event"] == "cut" and record["line"] == lines + 1 and record["bytes"] == len(fragment)
        assert SSN not in trail.read_text(errors="replace")

        # a tail that is not a cut line but garbage: no start, one line saying why (no stack trace)
        copy = tmp_path / "garbage" / "audit.log"
        copy.parent.mkdir()
        shutil.copy(trail, copy)
        with open(copy, "ab") as f:
            f.write(b"not an audit line\n")
        other = TrailProxy(tmp_path, backend.port, kms, f"  aud.full: {{ key: {key}, fields: {{ ssn: {{}} }} }}\n",
                           copy, name="proxy-garbage-tail")
        r = subprocess.run(["java", "-jar", str(JAR), "proxy", "--config", str(other.config)], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"{copy} ends in a line that is not an audit line" in r.stderr, r.stderr
        assert "\tat " not in r.stdout + r.stderr and "Exception" not in r.stderr, r.stdout + r.stderr
    finally:
        proxy.stop()
        disk.release()
