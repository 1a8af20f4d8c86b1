"""Issue 41's starvation benchmark: can queries the proxy evaluates starve everyone else?

30 clients (6 processes of 5 threads) run `find({x: {$gt: r}}).sort({x: 1}).limit(50)` on 10,000
documents of 4.4 KB whose x is randomized: each query has the proxy read, decrypt and examine all
10,000 candidates (44 MB). Meanwhile a probe reads one document by _id from a plain collection,
alternately through the proxy and straight to the backend, so the two are measured in the same
window on the same busy machine; /healthz is asked every second and the proxy's RSS sampled. The
limit keeps the clients' own decoding (in Python, on the same two cores) out of the way: the cost
under test is the proxy's candidates, which the limit does not reduce.

The load runs for three windows of 60 s: the p99 of one window on a shared 2-core machine moved
between 1.2 and 1.8 times the backend's from run to run, so each window's ratio is reported and
the target judged on their median. The proxy's CPU (utime + stime from /proc) per evaluated query
answered is reported beside it.

Writes results/starvation/report.md. Not a test (pytest does not collect it by name):
`make bench-starvation` (about 5 minutes)."""
import multiprocessing
import os
import random
import re
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request
from datetime import date
from pathlib import Path

from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "starvation" / "report.md"
DOCS = 10_000
PAD = "s" * 4_300  # with _id, x and the envelope: about 4.4 KB a document
PROCESSES, THREADS = 6, 5
WINDOWS = 3
WINDOW_SECONDS = int(os.environ.get("FLE_STARVATION_SECONDS", "60"))
LOAD_SECONDS = WINDOWS * WINDOW_SECONDS
QUIET_SECONDS = 15
AFTER_SECONDS = 60
BUDGET = 512 * 1024 * 1024  # maxEvaluationBytes (the default)
# The proxy's JVM as docs/operations.md says to run it: without a heap cap, the JVM's default (a
# quarter of the machine's memory) lets garbage grow the heap far past what the proxy holds.
JVM_OPTIONS = os.environ.get("FLE_STARVATION_JVM", "-Xmx640m -XX:MaxDirectMemorySize=1g").split()


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def clients(uri, stop_at, counts):
    """One process's threads: evaluated queries until stop_at; answered and refused counted."""
    def run():
        c = client(uri, maxPoolSize=THREADS)
        answered = refused = 0
        while time.time() < stop_at:
            try:
                list(c.enc.big.find({"x": {"$gt": random.randrange(DOCS)}}).sort("x", 1).limit(50))
                answered += 1
            except OperationFailure as e:
                refused += 1
                assert e.code == 9720013, e.details  # the proxy-wide budget; anything else is a failure
                time.sleep(0.05)  # as a client backing off before it retries
        c.close()
        counts.put((answered, refused))

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def probe(proxy_uri, direct_uri, stop, samples):
    """find_one by _id on a plain collection, through the proxy and straight, alternately: (when, ms)."""
    via, direct = client(proxy_uri), client(direct_uri)
    while not stop.is_set():
        for name, c in (("proxy", via), ("direct", direct)):
            t0 = time.perf_counter()
            c.p.plain.find_one({"_id": random.randrange(1000)})
            samples[name].append((time.monotonic(), (time.perf_counter() - t0) * 1000))
        time.sleep(0.02)
    via.close()
    direct.close()


def healthz(port, stop, answers):
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=4) as r:
                answers.append(r.status)
        except urllib.error.HTTPError as e:
            answers.append(e.code)
        except OSError:
            answers.append(0)
        time.sleep(max(0.0, 1 - (time.monotonic() - t0)))


def cpu_seconds(pid):
    """utime + stime of the process, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def answered_metric(port):
    """fleproxy_evaluated_queries_total{outcome="answered"}: the proxy's own count, beside the clients'."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    m = re.search(r'fleproxy_evaluated_queries_total\{[^}]*outcome="answered"[^}]*\} ([0-9.e+]+)', text)
    return float(m.group(1)) if m else 0.0


def heap_mb(pid):
    """(committed, used) MB of the JVM's heap, from jcmd GC.heap_info: what of RSS the heap holds."""
    out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True).stdout
    m = re.search(r"heap\s+total (\d+)K, used (\d+)K", out)
    return (int(m.group(1)) / 1024, int(m.group(2)) / 1024) if m else (float("nan"), float("nan"))


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def phase(workdir_proxy, direct_uri, seconds, load):
    """Probes (and the load, if asked) for `seconds`; the samples, healthz answers, RSS peak, counts."""
    proxy = workdir_proxy
    samples = {"proxy": [], "direct": []}
    answers, stop = [], threading.Event()
    started = time.monotonic()
    peak = [rss_mb(proxy.proc.pid)]
    workers, counts = [], multiprocessing.get_context("spawn").Queue()
    if load:
        stop_at = time.time() + seconds
        for _ in range(PROCESSES):
            p = multiprocessing.get_context("spawn").Process(target=clients, args=(proxy.uri(), stop_at, counts))
            p.start()
            workers.append(p)
    threads = [threading.Thread(target=probe, args=(proxy.uri(), direct_uri, stop, samples)),
               threading.Thread(target=healthz, args=(proxy.admin_port, stop, answers))]
    for t in threads:
        t.start()
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        peak[0] = max(peak[0], rss_mb(proxy.proc.pid))
        time.sleep(0.25)
    stop.set()
    for t in threads:
        t.join()
    answered = refused = 0
    for p in workers:
        p.join()
    for _ in range(len(workers) * THREADS):  # each thread of each process puts its own tally
        a, r = counts.get(timeout=60)
        answered, refused = answered + a, refused + r
    return samples, answers, peak[0], answered, refused, started


def window(samples, start, end):
    """The samples taken in [start, end)."""
    return {k: [(t, ms) for t, ms in v if start <= t < end] for k, v in samples.items()}


def ratio_of(samples):
    return pct([ms for _, ms in samples["proxy"]], 0.99) / pct([ms for _, ms in samples["direct"]], 0.99)


def row(label, samples):
    p, d = [ms for _, ms in samples["proxy"]], [ms for _, ms in samples["direct"]]
    return (f"| {label} | {len(p)} | {statistics.median(p):.2f} / {pct(p, 0.99):.1f} / {max(p):.0f} | "
            f"{statistics.median(d):.2f} / {pct(d, 0.99):.1f} / {max(d):.0f} | {pct(p, 0.99) / pct(d, 0.99):.2f} |")


def test_evaluations_do_not_starve_the_proxy(workdir, backend, kms):
    key = kms.keys["AES-256"]
    proxy = EncryptingProxy(workdir, backend.port, kms, f"  enc.big: {{ key: {key}, fields: {{ x: {{}} }} }}\n",
                            name="proxy-starvation", admin=True)
    proxy.jvm_options = JVM_OPTIONS
    proxy.start()
    direct_uri = f"mongodb://127.0.0.1:{backend.port}"
    try:
        with client(proxy.uri()) as c, client(direct_uri) as d:
            c.enc.big.drop()
            for start in range(0, DOCS, 1000):
                c.enc.big.insert_many([{"_id": i, "x": random.randrange(DOCS), "pad": PAD}
                                       for i in range(start, start + 1000)])
            d.p.plain.drop()
            d.p.plain.insert_many([{"_id": i, "v": i} for i in range(1000)])
            list(c.enc.big.find({"x": {"$gt": 0}}).sort("x", 1).limit(50))  # warm-up
        rss_before = rss_mb(proxy.proc.pid)
        quiet = phase(proxy, direct_uri, QUIET_SECONDS, load=False)
        cpu0, metric0 = cpu_seconds(proxy.proc.pid), answered_metric(proxy.admin_port)
        loaded = phase(proxy, direct_uri, LOAD_SECONDS, load=True)
        cpu = cpu_seconds(proxy.proc.pid) - cpu0
        answered_by_proxy = answered_metric(proxy.admin_port) - metric0
        time.sleep(AFTER_SECONDS)
        rss_after = rss_mb(proxy.proc.pid)
        heap_after = heap_mb(proxy.proc.pid)
        if os.environ.get("FLE_STARVATION_HISTOGRAM"):  # what the heap holds then, for a diagnosis
            Path(os.environ["FLE_STARVATION_HISTOGRAM"]).write_text(subprocess.run(
                ["jcmd", str(proxy.proc.pid), "GC.class_histogram"], capture_output=True, text=True).stdout)
    finally:
        proxy.stop()
    samples, answers, peak, answered, refused, started = loaded
    windows = [window(samples, started + i * WINDOW_SECONDS, started + (i + 1) * WINDOW_SECONDS)
               for i in range(WINDOWS)]
    ratios = [ratio_of(w) for w in windows]
    ratio = statistics.median(ratios)
    healthy = sum(1 for a in answers if a == 200)
    lines = [
        "# Evaluated queries against everyone else (issue 41)",
        "",
        f"`make bench-starvation` on {date.today().isoformat()}, {os.cpu_count()} cores shared, the embedded backend; "
        f"{DOCS:,} documents of 4.4 KB with `x` randomized (AES-256-GCM); {PROCESSES * THREADS} clients running "
        f"`find({{x: {{$gt: r}}}}).sort({{x: 1}}).limit(50)` ({DOCS:,} candidates each) for {WINDOWS} windows "
        f"of {WINDOW_SECONDS} s; "
        f"the proxy's JVM run with `{' '.join(JVM_OPTIONS) or 'no options'}`; "
        "a probe `find_one({_id})` on a plain collection alternately through the proxy and straight to the backend.",
        "",
        "| window | probes | through the proxy: p50 / p99 / max ms | straight: p50 / p99 / max ms | p99 ratio |",
        "|---|---:|---:|---:|---:|",
        row("quiet", quiet[0]),
        *[row(f"30 clients evaluating, window {i + 1}", w) for i, w in enumerate(windows)],
        row("30 clients evaluating, all windows", samples),
        "",
        f"- p99 ratio per window: {', '.join(f'{r:.2f}' for r in ratios)}; median {ratio:.2f}.",
        f"- Evaluated queries answered: {answered:,} (the proxy counted {answered_by_proxy:,.0f}); refused with "
        f"9720013 (the proxy-wide budget, maxEvaluationBytes {BUDGET // (1024 * 1024)} MiB): {refused:,}. "
        f"Proxy CPU under load: {cpu:.1f} s, {cpu / max(1, answered) * 1000:.1f} ms per query answered.",
        f"- /healthz: {healthy} of {len(answers)} answers were 200.",
        f"- Proxy RSS: {rss_before:.0f} MB before, peak {peak:.0f} MB under load (budget + 300 MB = "
        f"{BUDGET / 2**20 + 300:.0f} MB), {rss_after:.0f} MB {AFTER_SECONDS} s after the load stopped (the heap then: {heap_after[0]:.0f} MB "
        f"committed, {heap_after[1]:.0f} MB used).",
        f"- Target: p99 ratio ≤ 1.5 (the windows' median) — {'met' if ratio <= 1.5 else 'missed'} ({ratio:.2f}); "
        f"/healthz always 200 — "
        f"{'met' if healthy == len(answers) else 'missed'}; RSS peak ≤ budget + 300 MB — "
        f"{'met' if peak <= BUDGET / 2**20 + 300 else 'missed'}; RSS a minute after within 100 MB of before — "
        f"{'met' if rss_after - rss_before <= 100 else 'missed'}.",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))
