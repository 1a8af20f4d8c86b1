"""The scale report's tables and verdicts, from figures made up here (the measurement itself runs
against a real proxy in `make bench-scale`)."""
from deploy.bench import scale, stats


def _paths(ratio):
    row = {"fields": 3000, "documents": 133}
    for op in ("insert", "find"):
        row[op] = {"listed": stats.spread([0.6]), "star": stats.spread([0.5]), "ratio": stats.spread([ratio])}
    return [row]


def _sizes(largest, raw_smallest=0.9):
    """The net figures 0.5 µs/KB but the largest size's; the raw ones higher at the smallest."""
    net = {kb: stats.spread([0.5]) for kb in scale.INSERT_SIZES_KB}
    net[scale.INSERT_SIZES_KB[-1]] = stats.spread([largest])
    raw = dict(net)
    raw[scale.INSERT_SIZES_KB[0]] = stats.spread([raw_smallest])
    return {("plain", "insert"): {"by_size": raw, "ratio": raw_smallest / 0.5, "net": net, "net_ratio": largest / 0.5,
                                  "round_trip": stats.spread([31.0])}}


def test_each_dimension_gets_its_verdict_against_its_limit():
    batches = {"by_batch": {100: stats.spread([10.0]), 1000: stats.spread([8.0]), None: stats.spread([8.5])},
               "ratio": 8.5 / 8.0}
    text = "\n".join(scale.report(_paths(1.19), _sizes(0.6), 3, "make bench-scale", "note",
                                  {"before": 100, "held": 515, "after_5s": 228, "after": 150}, batches))
    assert "| default | 8.50 |" in text and "Verdict: **flat** (default / cheapest 1.06)." in text
    assert "| 3,000 | insert | 0.60 | 0.50 | 1.19 | flat |" in text
    assert "Verdict: **flat** (limit 1.2)." in text and "Verdict: **flat** (net, limit 1.3)." in text
    assert "| plain, insert | 31 | 0.1 MB: 0.90; 1 MB: 0.50;" in text and "| 1.80 | 0.1 MB: 0.50;" in text
    assert "38 MB: 0.60 | 1.20 | flat |" in text, "the verdict is the net one: the raw ratio is shown"
    assert "| 100 MB | 515 MB | 228 MB | 150 MB | back |" in text
    text = "\n".join(scale.report(_paths(1.25), _sizes(0.7), 3, "make bench-scale", "note",
                                  {"before": 100, "held": 515, "after_5s": 480, "after": 450}))
    assert "| 3,000 | find | 0.60 | 0.50 | 1.25 | **not flat** |" in text
    assert "Verdict: **not flat** (limit 1.2)." in text and "Verdict: **not flat** (net, limit 1.3)." in text
    assert "38 MB: 0.70" in text and "| 1.40 | **not flat** |" in text
    assert "| 100 MB | 515 MB | 480 MB | 450 MB | **not back** |" in text


def test_a_policy_lists_every_path_of_every_field_count():
    yaml = scale.policy_yaml("K")
    for f in scale.FIELD_COUNTS:
        assert f"scale.{scale.listed_collection(f)}: {{ key: K, fields: {{ f0: {{}}," in yaml
        assert f"f{f - 1}: {{}} }} }}" in yaml
    assert 'scale.star: { key: K, fields: "*" }' in yaml and "scale.plain" not in yaml


def _rewrap(rates: dict, cpu=80.0):
    """rates: (N, parallel) -> (rewrap documents/s, past start-up, insert documents/s), the same for every source
    (N between the smallest and the largest: as the largest)."""
    def row(r, pace, i):
        return {"rate": stats.spread([r]), "pace": stats.spread([pace]), "insert": stats.spread([i]),
                "cpu_us": stats.spread([cpu]), "process_us": stats.spread([400.0])}
    large = scale.REWRAP_SIZES[-1]
    return {"rows": {(src, n, p): row(*rates.get((n, p), rates[(large, p)]))
                     for src in scale.REWRAP_SOURCES for n in scale.REWRAP_SIZES for p in scale.REWRAP_PARALLEL}}


def test_rewrap_is_at_loading_speed_only_when_fast_enough_at_every_size_and_flat():
    small, large = scale.REWRAP_SIZES[0], scale.REWRAP_SIZES[-1]
    fast = _rewrap({(small, 1): (6_000, 6_000, 10_000), (large, 1): (5_000, 5_000, 10_000),
                    (small, 4): (9_000, 5_500, 10_000), (large, 4): (5_000, 5_000, 10_000)})
    text = "\n".join(scale.report([], {}, 3, "make bench-scale", "note", rewrap=fast, rewrap_note="why"))
    assert f"| 3DES | {large:,} | 1 | 5,000 | 5,000 | 10,000 | 0.50 | 0.50 | 80 | 400 | – | – |" in text
    assert f"| AES-128 | {large:,} | 1 | 5,000 |" in text
    assert "Verdict, from 3DES, `--parallel 1`: run **at loading speed** (lowest rewrap / insert 0.50;" in text
    assert ("Verdict, from 3DES, `--parallel 4`: run **not at loading speed** (lowest rewrap / insert 0.50; "
            f"rate at {small:,} / rate at {large:,}: 1.80); past start-up **at loading speed** (lowest 0.50; "
            "smallest N / largest: 1.10); steady CPU at most 80 µs per document: **within 100**.") in text
    assert "\nwhy\n" in text
    slow = _rewrap({k: (800, 900, 18_000) for k in [(large, 1), (large, 4)]}, cpu=130.0)
    text = "\n".join(scale.report([], {}, 3, "c", "n", rewrap=slow))
    assert "run **not at loading speed** (lowest rewrap / insert 0.04;" in text and "**over 100**" in text


def test_the_rewrap_config_moves_each_collection_to_the_new_key_and_keeps_its_old_one():
    old = {"rw": "OLD", "rwaes": "OLDAES"}
    proxy = "collections:\n" + scale.policy_yaml("NEW", old_keys=old)
    assert '  scale.rw: { key: OLD, fields: "*" }' in proxy and '  scale.rwaes: { key: OLDAES, fields: "*" }' in proxy
    moved = scale.rewrap_yaml(proxy, "NEW", old)
    assert '  scale.rw: { key: NEW, previousKeys: [OLD], fields: "*" }' in moved
    assert '  scale.rwaes: { key: NEW, previousKeys: [OLDAES], fields: "*" }' in moved
    assert moved.replace('  scale.rw: { key: NEW, previousKeys: [OLD], fields: "*" }\n', "").replace(
        '  scale.rwaes: { key: NEW, previousKeys: [OLDAES], fields: "*" }\n', "") == \
        proxy.replace('  scale.rw: { key: OLD, fields: "*" }\n', "").replace('  scale.rwaes: { key: OLDAES, fields: "*" }\n', "")


def test_connections_policy_size_and_cursors_get_their_verdicts():
    def held(small, large, kb=None):
        keys = (1, 2)
        out = {"by": {keys[0]: stats.spread([small]), keys[1]: stats.spread([large])}, "ratio": large / small}
        if kb is not None:
            out["kb_each"] = kb
        return out
    text = "\n".join(scale.report([], {}, 3, "c", "n", held={
        "connections": held(40.0, 44.0, 4.0), "policy size": held(40.0, 60.0, 0.9), "cursors": held(33.0, 33.0)}))
    assert "| connections | C = 1: 40.00; C = 2: 44.00 | 1.10 | 4.0 KB each | flat |" in text
    assert "| policy size | P = 1: 40.00; P = 2: 60.00 | 1.50 | 0.9 KB each | **not flat** |" in text
    assert "| cursors | K = 1: 33.00; K = 2: 33.00 | 1.00 | – | flat |" in text


def test_a_policy_of_p_collections_names_p():
    yaml = scale.policy_size_yaml("K", 3)
    assert yaml.count("key: K") == 3 and 'scale.aes: { key: K, fields: "*" }' in yaml and "scale.c1:" in yaml


def test_the_relay_is_the_floor_and_what_the_proxy_adds_over_it_gets_its_own_verdict():
    sizes = _sizes(0.6)
    sizes[(scale.RELAY, "insert")] = {**_sizes(0.9)[("plain", "insert")], "net_ratio": 1.8}
    over = {kb: stats.spread([2.0]) for kb in scale.INSERT_SIZES_KB}
    sizes[("aes", "insert")] = {**_sizes(1.1)[("plain", "insert")], "over_relay": over, "over_relay_ratio": 1.0}
    text = "\n".join(scale.report(_paths(1.0), sizes, 3, "make bench-scale", "note"))
    assert "| relay, insert | 31 |" in text and "| 1.80 | (the floor) |" in text
    assert "Verdict: **not flat** (net, limit 1.3)." in text, "aes' net 0.5 → 1.1 is not flat; the relay's is not judged"
    assert "| aes, insert | 0.1 MB: 2.00; 1 MB: 2.00; 4 MB: 2.00; 16 MB: 2.00; 38 MB: 2.00 | 1.00 | flat |" in text
    assert "Verdict: **flat** (over the relay, limit 1.3)." in text
    over[scale.INSERT_SIZES_KB[-1]] = stats.spread([2.8])
    sizes[("aes", "insert")]["over_relay_ratio"] = 1.4
    text = "\n".join(scale.report(_paths(1.0), sizes, 3, "make bench-scale", "note"))
    assert "38 MB: 2.80 | 1.40 | **not flat** |" in text and "Verdict: **not flat** (over the relay, limit 1.3)." in text
