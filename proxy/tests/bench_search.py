"""Issue 42's search benchmark: what range and text indexes on encrypted fields change.

FLE_SEARCH_DOCS documents (default 1,000,000) with a randomized integer `price` and a randomized
string `name` are loaded through the proxy into two collections of the embedded backend:
`search.indexed`, whose price has a range index and whose name a prefix, a suffix and a substring
index (and the server indexes on their tags), and `search.unindexed`, the same fields without
them and a scan budget as large as the collection (the default 10,000 would refuse every query below with 9720012).
The backend has an 8 GiB heap and holds one collection at a time (the twin is loaded, queried and
dropped first). Each query runs FLE_SEARCH_REPEATS times (default 5) on each collection, the
queries interleaved,
and reports the median answer time, the candidates the proxy examined (its own
fleproxy_evaluated_candidates_total) and the proxy's CPU (utime + stime from /proc) per query;
every answer is checked against the values loaded. Then the tags' storage per document, from the
stored documents, and each collection's load rate.

Writes results/embedded/search.md. Not a test (pytest does not collect it by name):
`make bench-search` (about 7 minutes at 1,000,000 documents)."""
import os
import random
import statistics
import time
import urllib.request
from datetime import date
from pathlib import Path

import bson
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, backend_process, client, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "embedded" / "search.md"
N = int(os.environ.get("FLE_SEARCH_DOCS", "1000000"))
REPEATS = int(os.environ.get("FLE_SEARCH_REPEATS", "5"))
TOP = 10 * N  # prices 0 … TOP: a range of 1,000 values holds about 100 documents
BATCH = 10_000
HEAP_GB = 8  # the backend's heap: issue 42 asks for the largest collection it holds in 8 GiB


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def candidates(port, ns):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("fleproxy_evaluated_candidates_total{") and f'collection="{ns}"' in line)


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  search.indexed: {{ key: {key}, fields: {{ price: {{ index: {{ range: {{ min: 0, max: {TOP} }} }} }}, "
            f"name: {{ index: {{ prefix: {{ minLength: 1, maxLength: 4 }}, suffix: {{ minLength: 1, maxLength: 4 }}, "
            f"substring: {{ gramLength: 3, maxLength: 64 }} }} }} }} }}\n"
            f"  search.unindexed: {{ key: {key}, fields: {{ price: {{}}, name: {{}} }}, "
            f"maxScanDocuments: {min(N, 1_000_000)} }}\n")


def load(coll, prices, names):
    coll.drop()
    t0 = time.monotonic()
    for start in range(0, len(prices), BATCH):
        coll.insert_many([{"_id": i, "price": prices[i], "name": names[i]}
                          for i in range(start, min(start + BATCH, len(prices)))], ordered=False)
    return len(prices) / (time.monotonic() - t0)


def test_search_benchmark(workdir, kms):
    backend = backend_process(workdir, name="backend-search")
    backend.jvm_options = [f"-Xmx{HEAP_GB}g"]  # what "holds" means here: the collection within this heap
    backend.start()
    proxy = EncryptingProxy(workdir, backend.port, kms, policy(kms), name="proxy-search", admin=True).start()
    wait_for_port(proxy.admin_port, proxy.proc)
    try:
        rnd = random.Random(42)
        prices = [rnd.randint(0, TOP) for _ in range(N)]
        names = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)) for _ in range(N)]
        with client(proxy.uri(), socketTimeoutMS=600_000) as c, client(f"mongodb://127.0.0.1:{backend.port}") as direct:

            lo = TOP // 2
            in_range = sorted(i for i, p in enumerate(prices) if lo <= p < lo + 1_000)
            top10 = [i for _, i in sorted((p, i) for i, p in enumerate(prices))[:10]]
            start = names[7][:3]  # 26^3 starts: about N / 17,576 names begin with one
            prefixed = sorted(i for i, n in enumerate(names) if n.startswith(start))
            end = names[11][-3:]  # as many end with one
            ended = sorted(i for i, n in enumerate(names) if n.endswith(end))
            inner = names[13][2:6]  # 5 places of 26^4: about N / 91,000 names hold one
            holding = sorted(i for i, n in enumerate(names) if inner in n)
            queries = [
                ("range of 1,000 values", lambda coll: sorted(d["_id"] for d in coll.find(
                    {"price": {"$gte": lo, "$lt": lo + 1_000}}, {"_id": 1})), in_range),
                ("top 10 by price", lambda coll: [d["_id"] for d in coll.find({}, {"_id": 1}).sort(
                    [("price", 1), ("_id", 1)]).limit(10)], top10),
                (f"names starting with '{start}'", lambda coll: sorted(d["_id"] for d in coll.find(
                    {"name": {"$regex": f"^{start}"}}, {"_id": 1})), prefixed),
                (f"names ending with '{end}'", lambda coll: sorted(d["_id"] for d in coll.find(
                    {"name": {"$regex": f"{end}$"}}, {"_id": 1})), ended),
                (f"names holding '{inner}'", lambda coll: sorted(d["_id"] for d in coll.find(
                    {"name": {"$regex": inner}}, {"_id": 1})), holding),
            ]
            rows = []
            per = {(name, which): [] for name, _, _ in queries for which in ("indexed", "unindexed")}
            rates = {}
            # one collection in the backend at a time (the twin is dropped before the indexed one is
            # loaded), so that the heap holds the indexed collection alone; the queries interleave
            # within each collection's rounds
            for which in ("unindexed", "indexed"):
                coll = c.search[which]
                rates[which] = load(coll, prices, names)
                if which == "indexed":
                    coll.create_index("__fle.price")
                    coll.create_index("__fle.name")
                for _ in range(REPEATS):
                    for name, run, want in queries:
                        ns = f"search.{which}"
                        before, cpu0, t0 = candidates(proxy.admin_port, ns), cpu_seconds(proxy.proc.pid), time.monotonic()
                        try:
                            got = run(coll)
                            outcome = "exact" if got == want else f"WRONG ({len(got)} of {len(want)})"
                        except OperationFailure as e:
                            outcome = f"refused ({e.code})"
                        per[(name, which)].append((time.monotonic() - t0, candidates(proxy.admin_port, ns) - before,
                                                   cpu_seconds(proxy.proc.pid) - cpu0, outcome))
                if which == "unindexed":
                    coll.drop()
            for name, _, want in queries:
                for which in ("indexed", "unindexed"):
                    runs = per[(name, which)]
                    rows.append((name, which, len(want), statistics.median(r[0] for r in runs) * 1000,
                                 min(r[0] for r in runs) * 1000, max(r[0] for r in runs) * 1000,
                                 statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs) * 1000,
                                 sorted({r[3] for r in runs})))
                    # the index's answers must be exact; without it a large collection may be refused (reported)
                    assert all(r[3] == "exact" or which == "unindexed" and r[3].startswith("refused") for r in runs), (
                        name, which, runs)

            stored = direct.search.indexed.find_one({"_id": 1})
            with_tags = len(bson.encode(stored))
            without = len(bson.encode({k: v for k, v in stored.items() if k != "__fle"}))
            tag_count = len(stored["__fle"]["price"])
            name_count = len(stored["__fle"]["name"])
    finally:
        proxy.stop()
        backend.stop()

    lines = [f"# Search on an encrypted field: range index against none (`make bench-search`, {date.today()})", "",
             f"{N:,} documents with a randomized integer `price` (0 … {TOP:,}) and a randomized string `name` "
             "(8 random lowercase letters), loaded through the proxy into "
             "the embedded backend; `search.indexed`'s price has a range index (`min: 0`, "
             f"`max: {TOP:,}`, precision 0, sparsity 1), its name a prefix and a suffix index (`minLength: 1`, "
             "`maxLength: 4`) and a substring index (`gramLength: 3`), "
             "and the server indexes on `__fle.price` and `__fle.name`; "
             "`search.unindexed` has neither, and a scan budget as large as the collection "
             f"(`maxScanDocuments: {min(N, 1_000_000):,}`; the default 10,000 would refuse both queries with 9720012). "
             f"The backend runs with an {HEAP_GB} GiB heap (`-Xmx{HEAP_GB}g`) and holds one collection at a time: "
             "`search.unindexed` is loaded, queried and dropped before `search.indexed` is loaded. "
             f"Each query {REPEATS} times on each collection, the queries interleaved; median (min–max) answer time, median "
             "candidates the proxy examined (`fleproxy_evaluated_candidates_total`) and the proxy's CPU per query "
             "(utime + stime). Every answer checked against the values loaded; one refused says with which code "
             "(9720012: past a query's own cap of 64 MiB of candidates read).", "",
             "| query | collection | matches | answer ms, median (min–max) | candidates examined | proxy CPU ms | answers |",
             "|---|---|---|---|---|---|---|"]
    for name, which, matches, med, mn, mx, cands, cpu, outcomes in rows:
        lines.append(f"| {name} | {which} | {matches:,} | {med:,.1f} ({mn:,.1f}–{mx:,.1f}) | {cands:,.0f} | "
                     f"{cpu:,.0f} | {', '.join(outcomes)} |")
    lines += ["",
              f"Tags: {tag_count} per price ({tag_count} levels of a {tag_count}-bit grid) and {name_count} per name "
              "(its prefixes and suffixes of 1 to 4 letters, and its six 3-grams), "
              f"{with_tags - without} bytes of BSON per document (a document of "
              f"{without} bytes without them, {with_tags} with); the server's indexes on them hold "
              f"{tag_count + name_count} entries per document.",
              f"Loading through the proxy: {rates['unindexed']:,.0f} documents/s without the index, "
              f"{rates['indexed']:,.0f} with it (the tags made and stored beside each envelope; one run each, "
              "on a shared 2-core machine).", "",
              "On `search.indexed` the top 10 walks the grid from its low end (docs/query-model.md#range-indexes); "
              "on `search.unindexed` it reads every document.", ""]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
