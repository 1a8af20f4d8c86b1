"""How the proxy's cost grows with one dimension at a time (issue 30): the proxy's CPU (utime+stime
from /proc/PID/stat around each phase) per unit of work, in rounds that alternate what is compared
(the first round is warm-up), as medians with min–max, and a verdict per dimension: flat within
its ratio or not. `make bench-scale` runs it against a proxy of its own and writes
results/embedded/scale.md.

Dimensions measured here:
- listed paths: documents of F fields, every one encrypted, under a policy that lists the F paths
  against one with `fields: "*"`; µs per field, inserts and finds. Flat: listed ≤ 1.2 × "*" at
  every F.
- message size: inserts of messages from 100 KB to 38 MB, finds of replies from 100 KB to 15 MB
  (a reply holds 16 MiB at most), through the proxy without policy and with AES-GCM on every
  field, and through a byte relay that holds nothing (the floor, in the same rounds); µs per KB
  net of a round trip. Flat: the largest per-KB figure of a series ≤ 1.3 × its smallest; and what
  the proxy adds, its per-KB figure over the relay's at each size, flat within the same ratio.
- batch size: a find of 10,000 documents read whole with batches of 100, 1,000 and the server's
  default; µs per document. Flat: the default's (replies of up to 16 MiB) ≤ 1.3 × the cheapest.
- memory after a burst: the proxy's resident memory before, while ten peers hold 40 MB partial
  messages each, and after they leave. Back: within 100 MB of before, a minute after.
- connections: C idle client connections held open (each with its upstream connection), then
  inserts and finds by _id through one more; µs of proxy CPU per operation, and the proxy's
  live heap per connection. Flat: the largest C's per-operation CPU <= 1.3 x the smallest's.
- policy size: proxies whose policy names P collections; the same operations on one of them.
  Flat as above, and live heap per collection.
- cursors: K cursors left open (a find with batch size 1, one document read), then the same
  operations. Flat as above.
- rewrap size: `fle-proxy rewrap` (3DES -> AES) of N ten-field documents, with one batch at a
  time and four, against `insert_many` of the same documents through the proxy; documents/s and
  rewrap's CPU per document: its threads but the JIT compilers' once a quarter is done (past its
  start and warm-up; goal <= 100 us), and the whole process's over the whole run.
  At loading speed: rewrap's rate >= 0.5 x the insert rate at every N, and its rate at the largest
  N within 1.3 x of the smallest.
"""
from __future__ import annotations

import os
import resource
import socket
import struct
import subprocess
import time
from pathlib import Path

from . import markdown, stats
from .procstat import TICK, cpu_seconds

FIELD_COUNTS = (100, 1_000, 3_000)
FIELDS_PER_PHASE = 1_000_000  # ~0.5 s of proxy CPU a phase: /proc counts in 10 ms ticks
INSERT_SIZES_KB = (100, 1_000, 4_000, 16_000, 38_000)
FIND_SIZES_KB = (100, 1_000, 4_000, 15_000)
BYTES_PER_PHASE_KB = 1_000_000  # ~0.3 s of CPU a phase: /proc counts in 10 ms ticks
ROUND_TRIPS = 5_000  # messages of one 100-byte value: the cost per round trip
WARM_ROUND_TRIPS = 20_000  # before them: the JIT takes ~20,000 small operations to settle
DOC_KB = 250  # the documents messages are made of: a 250 KB value each
PATHS_LIMIT = 1.2
SIZE_LIMIT = 1.3
RELAY = "relay"  # the series of the byte relay in measure_sizes
BATCH_DOCUMENTS = 10_000
BATCHES = (100, 1_000, None)  # None: the server's default (101, then replies of up to 16 MiB)
BATCH_LIMIT = 1.3
BURST_PEERS = 10
BURST_BYTES = 40_000_000  # each peer's partial message: declared 45 MB, 40 MB sent, then gone
BURST_LIMIT_MB = 100
BURST_WAIT_S = 60
CONNECTIONS = (10, 1_000)
POLICY_SIZES = (1, 10_000)
CURSORS = (0, 10_000)
OPS_PER_PHASE = 6_000
GROWTH_LIMIT = 1.3
REWRAP_SIZES = (1_000, 10_000, 100_000)
REWRAP_PARALLEL = (1, 4)
# what is moved: 3DES to AES-GCM (a suite retired), and an AES key to another (a key rotation);
# each name is the collection that holds it under its old key
REWRAP_SOURCES = {"3DES": "rw", "AES-128": "rwaes"}
REWRAP_BATCH = 250
REWRAP_SPEED = 0.5   # of the insert rate
REWRAP_LIMIT = 1.3   # rate at the smallest N / rate at the largest
REWRAP_CPU_US = 100  # rewrap's own CPU per document, steady


def listed_collection(fields: int) -> str:
    return f"listed{fields}"


def policy_yaml(key: str, db: str = "scale", old_keys: dict | None = None) -> str:
    """The collections: one listing F paths per F, one with fields "*" for the same documents, one
    with fields "*" for the message sizes (its twin without policy, `plain`, is not in it), and
    with old_keys (collection -> key id), each such collection under its key for rewrap (see rewrap_yaml)."""
    lines = [f'  {db}.star: {{ key: {key}, fields: "*" }}', f'  {db}.aes: {{ key: {key}, fields: "*" }}']
    for name, old_key in (old_keys or {}).items():
        lines.append(f'  {db}.{name}: {{ key: {old_key}, fields: "*" }}')
    for f in FIELD_COUNTS:
        listed = ", ".join(f"f{i}: {{}}" for i in range(f))
        lines.append(f"  {db}.{listed_collection(f)}: {{ key: {key}, fields: {{ {listed} }} }}")
    return "\n".join(lines) + "\n"


def _timed(pid: int, work) -> float:
    c0 = cpu_seconds(pid)
    work()
    return cpu_seconds(pid) - c0


def _document(i: int, fields: int) -> dict:
    return {"_id": i, **{f"f{k}": f"value-{k:010d}" for k in range(fields)}}


def measure_paths(db, pid: int, rounds: int = 3) -> list[dict]:
    """Per F: µs of proxy CPU per field for inserts and finds, listed and "*", and their ratios."""
    rows = []
    for f in FIELD_COUNTS:
        docs = max(2, FIELDS_PER_PHASE // f)
        batch = max(1, min(docs, 2_000_000 // (f * 30)))  # messages of ~2 MB
        documents = [_document(i, f) for i in range(docs)]
        per = {(mode, op): [] for mode in ("listed", "star") for op in ("insert", "find")}
        for r in range(rounds + 1):
            for mode in (("listed", "star") if r % 2 == 0 else ("star", "listed")):
                coll = db[listed_collection(f) if mode == "listed" else "star"]
                coll.drop()

                def insert():
                    for k in range(0, docs, batch):
                        coll.insert_many(documents[k:k + batch], ordered=True)

                def find():
                    got = sum(1 for _ in coll.find({}, batch_size=batch))
                    if got != docs:
                        raise RuntimeError(f"{mode} F={f}: {got} documents of {docs}")

                ins, fnd = _timed(pid, insert), _timed(pid, find)
                if r > 0:
                    per[(mode, "insert")].append(ins * 1e6 / (docs * f))
                    per[(mode, "find")].append(fnd * 1e6 / (docs * f))
        row = {"fields": f, "documents": docs}
        for op in ("insert", "find"):
            listed, star = per[("listed", op)], per[("star", op)]
            row[op] = {"listed": stats.spread(listed), "star": stats.spread(star),
                       "ratio": stats.spread([a / b for a, b in zip(listed, star) if b > 0])}
        rows.append(row)
    return rows


def measure_sizes(series: dict, rounds: int = 3) -> dict:
    """series: name -> (collection, pid of the process whose CPU counts), e.g. the proxy's `plain`
    and `aes` and the byte relay's `relay` (RELAY, the floor: it holds nothing). Per series ×
    operation: µs of CPU per KB at each message size, as measured ("raw") and net of the series'
    cost per round trip ("net": the same operation on one 100-byte value, measured in the same
    round, taken off each message), with the ratio of each; with a relay among the series, each
    other series' net per KB over the relay's at each size, paired within a round ("over_relay")."""
    value = b"\x5a" * (DOC_KB * 1000)
    names = list(series)
    out = {}
    for coll, _ in series.values():  # warm: the round trips' code compiled before any is measured
        coll.drop()
        for i in range(WARM_ROUND_TRIPS // 2):
            coll.insert_many([{"_id": i, "v": value[:100]}])
            if coll.find_one({"_id": i}) is None:
                raise RuntimeError(f"{coll.name}: _id {i} not found")
    for op, sizes in (("insert", INSERT_SIZES_KB), ("find", FIND_SIZES_KB)):
        phases = (0,) + sizes  # 0: the round trip alone, one 100-byte value a message
        per = {(name, kb): [] for name in names for kb in phases}  # (µs, messages, KB) per round
        for r in range(rounds + 1):  # round 0 is warm-up: the large messages' code compiled
            for name in (names if r % 2 == 0 else names[::-1]):
                coll, pid = series[name]
                for kb in phases:
                    used, messages, kbs = _size_phase(coll, pid, op, kb, value)
                    if r > 0:
                        per[(name, kb)].append((used * 1e6, messages, kbs))
        nets = {}
        for name in names:
            trip = [u / m for u, m, _ in per[(name, 0)]]  # µs per round trip, per round
            raw = {kb: stats.spread([u / k for u, _, k in per[(name, kb)]]) for kb in sizes}
            nets[name] = {kb: [(u - t * m) / k for (u, m, k), t in zip(per[(name, kb)], trip)] for kb in sizes}
            net = {kb: stats.spread(v) for kb, v in nets[name].items()}
            out[(name, op)] = {"by_size": raw, "ratio": _spread_ratio(raw), "net": net,
                               "net_ratio": _spread_ratio(net), "round_trip": stats.spread(trip)}
        if RELAY in nets:
            for name in names:
                if name != RELAY:
                    over = {kb: stats.spread([a / b for a, b in zip(nets[name][kb], nets[RELAY][kb]) if b > 0])
                            for kb in sizes}
                    out[(name, op)]["over_relay"] = over
                    out[(name, op)]["over_relay_ratio"] = _spread_ratio(over)
    return out


def _size_phase(coll, pid: int, op: str, kb: int, value: bytes) -> tuple[float, int, float]:
    """One phase of the message sizes: CPU seconds of pid, messages, KB carried. kb 0: the round
    trip alone (ROUND_TRIPS messages of one 100-byte value); else messages of kb KB made of
    DOC_KB values, BYTES_PER_PHASE_KB in all (inserts), or replies of that size (finds)."""
    per_message = max(1, kb // DOC_KB)
    doc_value = value[:100] if kb == 0 else value if kb >= DOC_KB else value[:kb * 1000]
    messages = ROUND_TRIPS if kb == 0 else max(3, BYTES_PER_PHASE_KB // kb)
    coll.drop()
    if op == "insert":
        next_id, held = 0, 0

        def work():
            nonlocal next_id, held
            for _ in range(messages):
                coll.insert_many([{"_id": next_id + j, "v": doc_value} for j in range(per_message)])
                next_id += per_message
                held += kb
                if held >= 64_000:  # keep the backend's memory bounded
                    coll.delete_many({})
                    held = 0
    else:
        coll.insert_many([{"_id": j, "v": doc_value} for j in range(per_message)])

        def work():
            for _ in range(messages):
                got = sum(1 for _ in coll.find({}, batch_size=per_message + 1))
                if got != per_message:
                    raise RuntimeError(f"{coll.name}: {got} documents of {per_message}")
    return _timed(pid, work), messages, messages * per_message * len(doc_value) / 1000


def _by_size(by_size: dict, op: str, fmt=None) -> str:
    """"0.1 MB: median (min–max); 1 MB: …" for the sizes of an operation."""
    return "; ".join(f"{kb / 1000:g} MB: " + markdown.median_range(by_size.get(kb), fmt or _us)
                     for kb in (INSERT_SIZES_KB if op == "insert" else FIND_SIZES_KB))


def _spread_ratio(series: dict) -> float | None:
    medians = [s["median"] for s in series.values() if s]
    return max(medians) / min(medians) if medians and min(medians) > 0 else None


def measure_batches(db, pid: int, rounds: int = 3) -> dict:
    """µs of proxy CPU per document of a find of BATCH_DOCUMENTS documents (ten encrypted fields
    of 100 bytes each, `aes`), by batch size."""
    coll = db["aes"]
    coll.drop()
    doc = {f"f{k}": "v" * 100 for k in range(10)}
    coll.insert_many([{"_id": i, **doc} for i in range(BATCH_DOCUMENTS)])
    per = {b: [] for b in BATCHES}
    for r in range(rounds + 1):
        for b in (BATCHES if r % 2 == 0 else tuple(reversed(BATCHES))):
            def work():
                for _ in range(5):
                    cursor = coll.find({}) if b is None else coll.find({}, batch_size=b)
                    if sum(1 for _ in cursor) != BATCH_DOCUMENTS:
                        raise RuntimeError("a batch came back short")
            used = _timed(pid, work)
            if r > 0:
                per[b].append(used * 1e6 / (5 * BATCH_DOCUMENTS))
    series = {b: stats.spread(v) for b, v in per.items()}
    # what issue 30 saw grow: the default's replies of up to 16 MiB, against the cheapest batch
    return {"by_batch": series, "ratio": series[None]["median"] / min(s["median"] for s in series.values())}


def policy_size_yaml(key: str, collections: int, db: str = "scale") -> str:
    """`aes` (fields "*"), and collections - 1 others like it that nothing touches."""
    lines = [f'  {db}.aes: {{ key: {key}, fields: "*" }}']
    lines += [f'  {db}.c{i}: {{ key: {key}, fields: "*" }}' for i in range(collections - 1)]
    return "\n".join(lines) + "\n"


def _operations(coll, start: int, n: int = OPS_PER_PHASE):
    """n operations on encrypted documents of ten 100-byte fields: half inserts, half finds by _id."""
    doc = {f"f{k}": "v" * 100 for k in range(10)}
    for i in range(start, start + n // 2):
        coll.insert_one({"_id": i, **doc})
    for i in range(start, start + n // 2):
        if coll.find_one({"_id": i}) is None:
            raise RuntimeError(f"_id {i} not found")


def _per_op(coll, pid: int, start: int) -> float:
    """µs of proxy CPU per operation of one phase of _operations."""
    return _timed(pid, lambda: _operations(coll, start)) * 1e6 / OPS_PER_PHASE


def _hello_connection(port: int) -> socket.socket:
    """A client connection that said hello (so the proxy has made its upstream connection) and idles."""
    s = socket.create_connection(("127.0.0.1", port))
    body = b"".join([b"\x10hello\x00", struct.pack("<i", 1), b"\x02$db\x00", struct.pack("<i", 6), b"admin\x00"])
    doc = struct.pack("<i", 4 + len(body) + 1) + body + b"\x00"
    payload = struct.pack("<I", 0) + b"\x00" + doc
    s.sendall(struct.pack("<iiii", 16 + len(payload), 1, 0, 2013) + payload)
    header = b""
    while len(header) < 16:
        header += s.recv(16 - len(header))
    left = struct.unpack("<i", header[:4])[0] - 16
    while left > 0:
        left -= len(s.recv(left))
    return s


def collect(pid: int):
    """A full collection in the JVM (jcmd GC.run), so that a dimension starts from the same heap
    whatever ran before it. Right after the held dimension (1,000 connections, 10,000 cursors),
    listed / "*" read 0.76–1.91 at F = 100 and 0.84–1.50 at 1,000 in one run; with a collection
    first, 0.79–1.49 and 1.00–1.07 (the collector's work landing in some phases, we think)."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60, check=True)


def heap_mb(pid: int) -> float:
    """The JVM's live heap: used after a full collection (jcmd GC.run, then GC.heap_info)."""
    collect(pid)
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60,
                          check=True).stdout
    for line in info.splitlines():
        if "used" in line and "total" in line:
            return int(line.split("used")[1].split("K")[0].strip()) / 1024
    raise RuntimeError(f"no heap line in jcmd's answer: {info[:500]}")


def _growth(per: dict) -> dict:
    series = {k: stats.spread(v) for k, v in per.items()}
    medians = [series[k]["median"] for k in per]
    return {"by": series, "ratio": medians[-1] / medians[0]}


def measure_connections(coll, port: int, pid: int, rounds: int = 3) -> dict:
    """Per C in CONNECTIONS: µs of proxy CPU per operation with C idle connections open; and
    the proxy's live heap per connection (from the smallest C to the largest)."""
    per = {c: [] for c in CONNECTIONS}
    memory = []
    coll.drop()
    _operations(coll, 0, 3 * OPS_PER_PHASE)  # warm: the first of this run's operations
    coll.delete_many({})
    next_id = 0
    for r in range(rounds + 1):
        for c in (CONNECTIONS if r % 2 == 0 else tuple(reversed(CONNECTIONS))):
            idle = []
            try:
                for _ in range(c):
                    idle.append(_hello_connection(port))
                time.sleep(0.5)
                heap = heap_mb(pid)
                used = _per_op(coll, pid, next_id)
                next_id += OPS_PER_PHASE
                if r > 0:
                    per[c].append(used)
                    memory.append((c, heap))
            finally:
                for s in idle:
                    s.close()
            time.sleep(0.5)
        coll.delete_many({})
    out = _growth(per)
    small = _median([m for c, m in memory if c == CONNECTIONS[0]])
    large = _median([m for c, m in memory if c == CONNECTIONS[-1]])
    out["kb_each"] = (large - small) * 1024 / (CONNECTIONS[-1] - CONNECTIONS[0])
    return out


def measure_cursors(coll, pid: int, rounds: int = 3) -> dict:
    """Per K in CURSORS: µs of proxy CPU per operation with K cursors left open."""
    coll.drop()
    coll.insert_many([{"_id": -1 - i, "f0": "v" * 100} for i in range(2)])
    per = {k: [] for k in CURSORS}
    next_id = 0
    for r in range(rounds + 1):
        for k in (CURSORS if r % 2 == 0 else tuple(reversed(CURSORS))):
            cursors = []
            try:
                for _ in range(k):
                    cur = coll.find({"_id": {"$lt": 0}}, batch_size=1)
                    next(cur)
                    cursors.append(cur)
                used = _per_op(coll, pid, next_id)
                next_id += OPS_PER_PHASE
                if r > 0:
                    per[k].append(used)
            finally:
                for cur in cursors:
                    cur.close()
        coll.delete_many({"_id": {"$gte": 0}})
    return _growth(per)


def measure_policy_size(start_proxy, rounds: int = 3) -> dict:
    """Per P in POLICY_SIZES: µs of proxy CPU per operation on one collection of a proxy whose
    policy names P; start_proxy(P) gives (collection, pid, stop). The proxies run side by side,
    each warmed first, the rounds alternating between them; and the live heap per collection."""
    proxies = {}
    try:
        for p in POLICY_SIZES:
            proxies[p] = start_proxy(p)
            coll = proxies[p][0]
            coll.drop()
            _operations(coll, 0, 3 * OPS_PER_PHASE)  # keys fetched, code compiled: not counted
            coll.delete_many({})
        per = {p: [] for p in POLICY_SIZES}
        next_id = 0
        for r in range(rounds + 1):
            for p in (POLICY_SIZES if r % 2 == 0 else tuple(reversed(POLICY_SIZES))):
                coll, pid, _ = proxies[p]
                used = _per_op(coll, pid, next_id)
                next_id += OPS_PER_PHASE
                if r > 0:
                    per[p].append(used)
        memory = {p: heap_mb(proxies[p][1]) for p in POLICY_SIZES}
    finally:
        for _, _, stop in proxies.values():
            stop()
    out = _growth(per)
    out["kb_each"] = (memory[POLICY_SIZES[-1]] - memory[POLICY_SIZES[0]]) * 1024 / (POLICY_SIZES[-1] - POLICY_SIZES[0])
    return out


def _median(values):
    return stats.spread(values)["median"]


def rewrap_yaml(proxy_yaml: str, key: str, old_keys: dict, db: str = "scale") -> str:
    """The proxy's config with each collection of old_keys moved to key, its old key kept to open it."""
    for name, old_key in old_keys.items():
        proxy_yaml = proxy_yaml.replace(f'  {db}.{name}: {{ key: {old_key}, fields: "*" }}',
                                        f'  {db}.{name}: {{ key: {key}, previousKeys: [{old_key}], fields: "*" }}')
    return proxy_yaml


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _thread_cpu(pid: int) -> dict:
    """tid -> (thread name, utime + stime seconds) of a process's threads, from /proc."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            stat = f.read()
        fields = stat.rsplit(")", 1)[1].split()
        out[tid] = (stat[stat.index("(") + 1:stat.rindex(")")], (int(fields[11]) + int(fields[12])) / TICK)
    return out


def _own(threads: dict) -> float:
    """CPU of a JVM's threads but its JIT compilers (a warm-up cost, however long the run)."""
    return sum(cpu for name, cpu in threads.values() if " CompilerThre" not in name)


def run_rewrap(jar: Path, config: Path, namespace: str, *extra: str, state=None, total: int = 0) -> dict:
    """One run: its wall and CPU seconds (the rewrap process's, from rusage) and its stdout; with
    state (the fle_proxy.rewrap_state collection), also its pace past start-up, from the checkpoint
    that passed a quarter of the total to the end (/proc sampled every 20 ms as it goes): the CPU per
    document of its threads but the JIT compilers, and its documents/s by the checkpoints' own
    clock (updatedAt, in ms). Raises if the run failed."""
    if state is not None:
        state.delete_one({"_id": namespace})  # an earlier run's checkpoint would read as this one's
    c0, t0 = _children_cpu(), time.monotonic()
    proc = subprocess.Popen(["java", "-jar", str(jar), "rewrap", "--config", str(config), "--collection", namespace,
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mark, seen = None, {}  # (documents done, own CPU then, checkpoint time); each thread's CPU as last seen
    while state is not None and proc.poll() is None:
        try:
            seen.update(_thread_cpu(proc.pid))
        except (OSError, ValueError, IndexError):  # it ended while being read
            break
        if mark is None:
            saved = state.find_one({"_id": namespace}) or {}
            done = 0 if saved.get("finished") else saved.get("counts", {}).get("examined", 0)
            if done >= total / 4 and done > 0:
                mark = (done, _own(seen), saved["updatedAt"])
        time.sleep(0.02)
    out, err = proc.communicate(timeout=3600)
    wall, cpu = time.monotonic() - t0, _children_cpu() - c0
    if proc.returncode != 0:
        raise RuntimeError(f"rewrap {namespace} {extra}: exit {proc.returncode}: {out}{err[-2000:]}")
    steady = pace = None
    if mark and total > mark[0]:
        steady = (_own(seen) - mark[1]) / (total - mark[0])
        span = (state.find_one({"_id": namespace})["updatedAt"] - mark[2]).total_seconds()
        pace = (total - mark[0]) / span if span > 0 else None  # batches done at once: no span to time
    return {"wall": wall, "cpu": cpu, "out": out, "cpu_per_doc": steady, "pace": pace}


def measure_rewrap(db, jar: Path, config: Path, rounds: int = 3, backend_pid: int | None = None) -> dict:
    """Per source (REWRAP_SOURCES), N and --parallel: rewrap's documents/s (its own clock, from its
    summary) and past start-up, its CPU per document, and insert_many's documents/s through the
    proxy for the same documents (db is a client of the proxy, whose policy has each source's
    collection under its old key); with backend_pid, the backend's CPU per document in each. The
    warm-up round leaves out the largest N."""
    doc = {f"f{k}": "v" * 100 for k in range(10)}
    per = {(src, n, p): {"rate": [], "pace": [], "insert": [], "cpu_us": [], "process_us": [], "backend_insert_us": [],
                         "backend_rewrap_us": []}
           for src in REWRAP_SOURCES for n in REWRAP_SIZES for p in REWRAP_PARALLEL}
    for r in range(rounds + 1):
        for src, name in REWRAP_SOURCES.items():
            for n in (REWRAP_SIZES if r > 0 else REWRAP_SIZES[:-1]):
                for p in (REWRAP_PARALLEL if r % 2 == 0 else tuple(reversed(REWRAP_PARALLEL))):
                    coll = db[name]
                    coll.drop()
                    b0, t0 = cpu_seconds(backend_pid) if backend_pid else 0, time.monotonic()
                    for k in range(0, n, REWRAP_BATCH):
                        coll.insert_many([{"_id": i, **doc} for i in range(k, min(n, k + REWRAP_BATCH))])
                    insert_rate = n / (time.monotonic() - t0)
                    b1 = cpu_seconds(backend_pid) if backend_pid else 0
                    run = run_rewrap(jar, config, f"{db.name}.{name}", "--batch", str(REWRAP_BATCH), "--parallel",
                                     str(p), state=db.client.fle_proxy.rewrap_state, total=n)
                    b2 = cpu_seconds(backend_pid) if backend_pid else 0
                    out = run["out"]
                    if f"{n:,} documents examined, {n:,} rewritten" not in out:
                        raise RuntimeError(f"rewrap of {n}: {out}")
                    rate = float(out.split(" documents/s)")[0].rsplit("(", 1)[1].replace(",", ""))
                    if r > 0:
                        m = per[(src, n, p)]
                        m["rate"].append(rate)
                        m["pace"].append(run["pace"])
                        m["insert"].append(insert_rate)
                        m["cpu_us"].append(run["cpu_per_doc"] * 1e6 if run["cpu_per_doc"] else None)
                        m["process_us"].append(run["cpu"] * 1e6 / n)
                        if backend_pid:
                            m["backend_insert_us"].append((b1 - b0) * 1e6 / n)
                            m["backend_rewrap_us"].append((b2 - b1) * 1e6 / n)
                    coll.drop()
    rows = {k: {m: stats.spread(v) for m, v in d.items()} for k, d in per.items()}
    return {"rows": rows}


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def measure_burst(port: int, pid: int) -> dict:
    """The proxy's resident memory before, while BURST_PEERS peers hold partial messages of
    BURST_BYTES each, and 5 s and BURST_WAIT_S s after they leave."""
    out = {"before": rss_mb(pid)}
    peers, chunk = [], b"\0" * 65536
    try:
        for _ in range(BURST_PEERS):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(struct.pack("<iiii", 45_000_000, 1, 0, 2013))
            for _ in range(BURST_BYTES // len(chunk)):
                s.sendall(chunk)
            peers.append(s)
        time.sleep(2)
        out["held"] = rss_mb(pid)
    finally:
        for s in peers:
            s.close()
    time.sleep(5)
    out["after_5s"] = rss_mb(pid)
    time.sleep(BURST_WAIT_S - 5)
    out["after"] = rss_mb(pid)
    return out


def _us(v):
    return f"{v:.2f}"


def rewrap_verdict(rewrap: dict) -> dict:
    """Per source and --parallel: the lowest rate / insert rate over N, by rewrap's summary and
    past start-up; the smallest N's rate / the largest N's, the same two ways; the highest steady
    CPU per document."""
    out = {}
    for src in REWRAP_SOURCES:
        for p in REWRAP_PARALLEL:
            rows = [rewrap["rows"][(src, n, p)] for n in REWRAP_SIZES]

            def worst(metric):
                got = [r[metric]["median"] / r["insert"]["median"] for r in rows if r[metric]]
                return min(got) if len(got) == len(rows) else None

            def growth(metric):
                first, last = rows[0][metric], rows[-1][metric]
                return first["median"] / last["median"] if first and last else None

            cpu = [r["cpu_us"]["median"] for r in rows if r["cpu_us"]]
            v = {"speed": worst("rate"), "speed_past_start": worst("pace"), "growth": growth("rate"),
                 "growth_past_start": growth("pace"), "cpu": max(cpu) if cpu else None}
            v["ok"] = (v["speed"] is not None and v["speed"] >= REWRAP_SPEED and v["growth"] is not None
                       and v["growth"] <= REWRAP_LIMIT)
            v["ok_past_start"] = (v["speed_past_start"] is not None and v["speed_past_start"] >= REWRAP_SPEED
                                  and v["growth_past_start"] is not None and v["growth_past_start"] <= REWRAP_LIMIT)
            out[(src, p)] = v
    return out


def report(paths: list[dict], sizes: dict, rounds: int, command: str, note: str, burst: dict | None = None,
           batches: dict | None = None, rewrap: dict | None = None, rewrap_note: str = "",
           held: dict | None = None) -> list[str]:
    """held: "connections", "policy size", "cursors" -> what measure_connections,
    measure_policy_size and measure_cursors returned."""
    lines = ["# How the proxy's cost grows, one dimension at a time", "",
             f"Proxy CPU (utime + stime of its process, from /proc) per unit of work; medians of {rounds} "
             "rounds after a warm-up, min–max in brackets, the compared cases alternating within each round. "
             + note, "",
             f"Command: `{command}`.", "",
             "## Listed paths", "",
             f"Documents of F fields, every one encrypted, inserted in messages of about 2 MB and read back "
             f"with `find`, under a policy listing the F paths (`fields: {{f0: {{}}, …}}`) and under `fields: \"*\"`. "
             f"Flat when listed ≤ {PATHS_LIMIT} × \"*\" per field at every F.", ""]
    rows = []
    flat = True
    for r in paths:
        for op in ("insert", "find"):
            ratio = r[op]["ratio"]
            ok = ratio is not None and ratio["median"] <= PATHS_LIMIT
            flat &= ok
            rows.append([f"{r['fields']:,}", op, markdown.median_range(r[op]["listed"], _us),
                         markdown.median_range(r[op]["star"], _us), markdown.median_range(ratio, "{:.2f}"),
                         "flat" if ok else "**not flat**"])
    lines += markdown.table(["F (paths listed)", "operation", "µs per field, listed", "µs per field, \"*\"",
                             "listed / \"*\"", "verdict"], rows, "rlrrrl")
    lines += ["", f"Verdict: **{'flat' if flat else 'not flat'}** (limit {PATHS_LIMIT}).", "",
              "## Message size", "",
              f"Inserts of messages made of {DOC_KB} KB values (one value below that), and finds whose "
              "replies hold the same, through the proxy without policy (`plain`) and with AES-GCM on every "
              f"field (`aes`), and through a byte relay (`relay`: `fle-bench.jar relay`, Netty on the same "
              "transport, forwarding bytes as they arrive, holding nothing) to the same backend, in the same "
              "rounds. Each message also costs what any round trip costs, whatever its size: the same "
              f"operation on one 100-byte value ({ROUND_TRIPS:,} of them, in the same round) gives it. \"Raw\" is "
              "µs per KB as measured; \"net\" takes that round trip off each message, leaving what the bytes "
              f"cost. Flat when a series' largest net µs per KB ≤ {SIZE_LIMIT} × its smallest (the raw ratio is "
              "shown too: at 100 KB the round trip is a large part of a message).", ""]
    rows = []
    flat = True
    for (name, op), s in sizes.items():
        ratio = s.get("net_ratio", s["ratio"])
        ok = ratio is not None and ratio <= SIZE_LIMIT
        if name != RELAY:
            flat &= ok
        rows.append([f"{name}, {op}", markdown.median_range(s.get("round_trip"), "{:.0f}"),
                     _by_size(s["by_size"], op), f"{s['ratio']:.2f}" if s["ratio"] else "–",
                     _by_size(s.get("net", {}), op), f"{ratio:.2f}" if ratio else "–",
                     "(the floor)" if name == RELAY else "flat" if ok else "**not flat**"])
    lines += markdown.table(["series", "µs per round trip", "raw µs per KB by message size", "raw largest / smallest",
                             "net µs per KB", "net largest / smallest", "verdict"], rows, "lrlrlrl")
    lines += ["", f"Verdict: **{'flat' if flat else 'not flat'}** (net, limit {SIZE_LIMIT}).", ""]
    over = {k: s for k, s in sizes.items() if "over_relay" in s}
    if over:
        lines += ["What the proxy adds: each series' net µs per KB over the relay's at the same size (paired "
                  f"within a round). Flat when its largest ≤ {SIZE_LIMIT} × its smallest: the proxy's cost then "
                  "grows with message size no faster than that of a relay that holds nothing.", ""]
        rows = []
        flat = True
        for (name, op), s in over.items():
            ratio = s["over_relay_ratio"]
            ok = ratio is not None and ratio <= SIZE_LIMIT
            flat &= ok
            rows.append([f"{name}, {op}", _by_size(s["over_relay"], op, "{:.2f}"), f"{ratio:.2f}" if ratio else "–",
                         "flat" if ok else "**not flat**"])
        lines += markdown.table(["series", "net ÷ relay's, by message size", "largest / smallest", "verdict"],
                                rows, "lllr")
        lines += ["", f"Verdict: **{'flat' if flat else 'not flat'}** (over the relay, limit {SIZE_LIMIT}).", ""]
    if batches:
        flat = batches["ratio"] <= BATCH_LIMIT
        lines += ["## Batch size", "",
                  f"A `find` of {BATCH_DOCUMENTS:,} documents (ten encrypted fields of 100 bytes each) read whole, "
                  "by batch size (the default: 101 documents, then replies of up to 16 MiB); µs of proxy CPU per "
                  f"document. Flat when the default's (the largest replies) ≤ {BATCH_LIMIT} × the cheapest batch's; "
                  "small batches cost more per document by the fixed cost of each reply.", ""]
        lines += markdown.table(["batch size", "µs per document"],
                                [["default" if b is None else f"{b:,}", markdown.median_range(v, _us)]
                                 for b, v in batches["by_batch"].items()], "rr")
        lines += ["", f"Verdict: **{'flat' if flat else 'not flat'}** (default / cheapest {batches['ratio']:.2f}).", ""]
    if burst:
        back = burst["after"] <= burst["before"] + BURST_LIMIT_MB
        lines += ["## Memory after a burst", "",
                  f"{BURST_PEERS} peers each declare a 45 MB message, send {BURST_BYTES // 1_000_000} MB of it and "
                  f"hold it, then leave; the proxy's resident memory (VmRSS). Back when, {BURST_WAIT_S} s after "
                  f"they left, it is within {BURST_LIMIT_MB} MB of where it was before.", ""]
        lines += markdown.table(["before", "held", "5 s after", f"{BURST_WAIT_S} s after", "verdict"],
                                [[f"{burst[k]:.0f} MB" for k in ("before", "held", "after_5s", "after")]
                                 + ["back" if back else "**not back**"]], "rrrrl")
        lines += [""]
    if held:
        lines += ["## Connections, policy size, cursors", "",
                  f"{OPS_PER_PHASE:,} operations (half `insert_one`, half `find_one` by `_id`, documents of ten "
                  "encrypted 100-byte fields) through one client while the proxy holds more: C other client "
                  "connections open and idle (each said hello, so each has its upstream connection), a policy "
                  "naming P collections (a proxy started with it), K cursors left open (a `find` with batch size "
                  f"1, one document read). µs of proxy CPU per operation. Flat when the largest's ≤ {GROWTH_LIMIT} × "
                  "the smallest's. Memory: the proxy's live heap (used after a full collection, `jcmd GC.heap_info`) "
                  "with the largest less with the smallest, per connection or collection.", ""]
        rows = []
        for name, unit, m in (("connections", "C", held.get("connections")), ("policy size", "P", held.get("policy size")),
                              ("cursors", "K", held.get("cursors"))):
            if not m:
                continue
            ok = m["ratio"] <= GROWTH_LIMIT
            sizes = "; ".join(f"{unit} = {k:,}: " + markdown.median_range(v, _us) for k, v in m["by"].items())
            memory = f"{m['kb_each']:.1f} KB each" if "kb_each" in m else "–"
            rows.append([name, sizes, f"{m['ratio']:.2f}", memory, "flat" if ok else "**not flat**"])
        lines += markdown.table(["dimension", "µs per operation", "largest / smallest", "memory", "verdict"], rows,
                                "llrrl")
        lines += [""]
    if rewrap:
        verdicts = rewrap_verdict(rewrap)
        lines += ["## Rewrap size", "",
                  f"`fle-proxy rewrap` (`--batch {REWRAP_BATCH:,}`) of N documents of ten 100-byte fields to AES-256-GCM, "
                  "from 3DES (a suite retired) and from another AES key (AES-128-GCM: a key rotation), one batch at "
                  "a time (`--parallel 1`) and four, against `insert_many` of the same documents through the proxy. "
                  "Documents/s: \"run\" is rewrap's own summary line (its JVM's start excluded; the KMS's keys, the "
                  "connection and the warm-up of its code included); \"past start-up\" is timed by its checkpoints, "
                  "from the one that passed a quarter of N to the end (– where the batches were done at once). CPU "
                  "per document: \"steady\" is that of rewrap's threads but the JIT compilers' over that same part; "
                  "\"whole\" is the process's over the whole run, the JVM's start and its JIT included; the backend's (its "
                  "process's, from /proc) while the documents were inserted and while rewrap ran. At loading "
                  f"speed when rewrap's rate ≥ {REWRAP_SPEED} × the insert rate at every N and its rate at the "
                  f"smallest N ≤ {REWRAP_LIMIT} × its rate at the largest; its own CPU within "
                  f"{REWRAP_CPU_US} µs per document.", ""]
        rows = []
        for (src, n, p), m in rewrap["rows"].items():
            rows.append([src, f"{n:,}", str(p), markdown.median_range(m["rate"], "{:,.0f}"),
                         markdown.median_range(m["pace"], "{:,.0f}"),
                         markdown.median_range(m["insert"], "{:,.0f}"),
                         f"{m['rate']['median'] / m['insert']['median']:.2f}",
                         f"{m['pace']['median'] / m['insert']['median']:.2f}" if m["pace"] else "–",
                         markdown.median_range(m["cpu_us"], "{:,.0f}"),
                         markdown.median_range(m["process_us"], "{:,.0f}"),
                         markdown.median_range(m.get("backend_insert_us"), "{:,.0f}"),
                         markdown.median_range(m.get("backend_rewrap_us"), "{:,.0f}")])
        lines += markdown.table(["from", "N", "--parallel", "rewrap documents/s, run", "past start-up",
                                 "insert_many documents/s", "rewrap / insert, run", "past start-up",
                                 "CPU µs per document, steady", "whole", "backend CPU µs per document, insert",
                                 "rewrap"], rows, "lrrrrrrrrrrr")

        def ratio(v):
            return f"{v:.2f}" if v is not None else "–"

        lines += [""]
        for (src, p), v in verdicts.items():
            cpu_ok = v["cpu"] is not None and v["cpu"] <= REWRAP_CPU_US
            lines.append(f"Verdict, from {src}, `--parallel {p}`: run **{'at loading speed' if v['ok'] else 'not at loading speed'}** "
                         f"(lowest rewrap / insert {ratio(v['speed'])}; rate at {REWRAP_SIZES[0]:,} / rate at "
                         f"{REWRAP_SIZES[-1]:,}: {ratio(v['growth'])}); past start-up **"
                         f"{'at loading speed' if v['ok_past_start'] else 'not at loading speed'}** (lowest "
                         f"{ratio(v['speed_past_start'])}; smallest N / largest: {ratio(v['growth_past_start'])}); "
                         f"steady CPU at most {v['cpu']:,.0f} µs per document: **"
                         f"{'within' if cpu_ok else 'over'} {REWRAP_CPU_US}**." if v["cpu"] is not None else
                         f"Verdict, from {src}, `--parallel {p}`: no steady CPU measured.")
        lines += ([""] + [rewrap_note] if rewrap_note else []) + [""]
    return lines
