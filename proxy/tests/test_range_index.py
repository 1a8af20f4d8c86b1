"""Range indexes on encrypted fields (docs/query-model.md#range-indexes): with each sealed value
the proxy stores tags in its own field __fle, the server returns only the candidates whose tags
cover a range, and the proxy evaluates the range exactly on plaintext. Each answer is held
against the same query on a plaintext twin stored directly in the backend; the proxy's own
count of the candidates it examined (fleproxy_evaluated_candidates_total) shows the index at
work; a recording relay shows what the server was sent."""

import datetime
import random
import struct
import time
import urllib.request

import pymongo
import pytest
from bson import Int64
from bson.decimal128 import Decimal128
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, Threads, client, wait_for_port
from test_rewrap import reload, rewrap

N = 20_000
TOP = 100_000  # prices on the grid: 0 … TOP


def policy(kms, indexed=True):
    key = kms.keys["AES-256"]
    price = "{ index: { range: { min: 0, max: %d } } }" % TOP if indexed else "{}"
    return (f"  shop.orders: {{ key: {key}, fields: {{ price: {price}, note: {{}} }} }}\n"
            f"  shop.fine: {{ key: {key}, fields: {{ w: {{ index: {{ range: {{ min: -1000, max: 1000, precision: 2, "
            f"sparsity: 3 }} }} }} }} }}\n"
            f"  shop.later: {{ key: {key}, fields: {{ price: {price} }} }}\n"
            f"  shop.events: {{ key: {key}, fields: {{ at: {{ index: {{ range: {{ type: date, min: 2020-01-01, "
            f"max: 2030-01-01T00:00:00Z, sparsity: 3 }} }} }} }} }}\n")


@pytest.fixture(scope="module")
def enc(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-range", admin=True).start()
    yield p
    p.stop()


def candidates(p, ns):
    with urllib.request.urlopen(f"http://127.0.0.1:{p.admin_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("fleproxy_evaluated_candidates_total{") and f'collection="{ns}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def orders():
    rnd = random.Random(5)
    docs = [{"_id": i, "price": rnd.randint(0, TOP), "note": "n%d" % i, "k": i % 7} for i in range(N)]
    # off the grid, other types, none at all: each answered as MongoDB would (an array whose elements
    # lie apart would show where the backend departs from MongoDB: it wants one element in the range;
    # NaN too: it finds NaN greater than every number, MongoDB less; both are "other" to the index)
    odd = [-5, TOP + 50, 2.5, Int64(77), Decimal128("123.75"), float("inf"), [99_000, 99_001],
           "12", None, {"a": 1}, True]
    for j, v in enumerate(odd):
        docs.append({"_id": N + j, "price": v, "note": "odd", "k": 0})
    docs.append({"_id": N + len(odd), "note": "no price", "k": 0})
    return docs


@pytest.fixture(scope="module")
def loaded(enc, backend):
    via = client(enc.uri())
    plain = client(f"mongodb://127.0.0.1:{backend.port}")
    for c in (via.shop.orders, plain.twins.orders):
        c.drop()
        c.insert_many(orders())
    via.shop.orders.create_index("__fle.price")
    yield via.shop, plain.twins
    via.close()
    plain.close()


def ids(cursor):
    return sorted((d["_id"] for d in cursor), key=repr)


def same(shop, twins, flt):
    got = ids(shop.orders.find(flt))
    want = ids(twins.orders.find(flt))
    assert got == want, flt
    return got


RANGES = [
    {"price": {"$gte": 50_000, "$lt": 50_500}},
    {"price": {"$gt": 99_900}},
    {"price": {"$lte": 150}},
    {"price": {"$gt": 10, "$lt": 200, "$ne": 77}},
    {"price": 99_000},
    {"price": {"$in": [10, 2.5, Int64(77), 123.75, 555]}},
    {"price": {"$gt": 60_000, "$lt": 40_000}},
    {"price": {"$gte": -10, "$lte": 0}},
    {"price": {"$gt": TOP}},
    {"price": {"$gte": 40_000, "$lte": 40_400}, "k": 3},
    {"$and": [{"price": {"$gt": 1_000}}, {"price": {"$lt": 1_300}}]},
]


@pytest.mark.parametrize("flt", RANGES, ids=[str(f) for f in RANGES])
def test_ranges_are_answered_exactly_from_few_candidates(enc, loaded, flt):
    shop, twins = loaded
    before = candidates(enc, "shop.orders")
    found = same(shop, twins, flt)
    examined = candidates(enc, "shop.orders") - before
    # the tags narrow the candidates to the range's cover (a few cells more than the matches),
    # plus "other" (numbers off the grid, NaN, arrays: 6 here) and documents without tags (none)
    assert examined <= 3 * len(found) + 50, (flt, examined, len(found))
    assert shop.command("count", "orders", query=flt)["n"] == len(found)


TOP_K = [
    ({"price": {"$gte": 20_000, "$lt": 21_000}}, [("price", -1), ("_id", 1)], 0, 10),
    ({}, [("price", 1), ("_id", 1)], 0, 10),
    ({}, [("price", -1), ("_id", -1)], 0, 10),
    ({}, [("price", 1)], 25, 5),
    ({"k": 3}, [("price", -1), ("_id", 1)], 0, 20),
    ({"note": {"$regex": "^n1"}}, [("price", 1), ("_id", 1)], 3, 7),
    ({"price": {"$type": "number"}}, [("price", 1), ("_id", 1)], 0, 1),
]


@pytest.mark.parametrize("flt,sort,skip,limit", TOP_K, ids=[str(t) for t in TOP_K])
def test_a_sort_with_a_limit_walks_the_grid_from_its_end(enc, loaded, flt, sort, skip, limit):
    """Sorted by the indexed field with a limit: the proxy reads the grid from the end the sort
    starts at, a widening ring at a time, until the best are certain; types that sort before
    numbers (null, missing) and after them (strings, documents, booleans), numbers off the grid
    and arrays are read with the first ring."""
    shop, twins = loaded
    before = candidates(enc, "shop.orders")
    got = [d["_id"] for d in shop.orders.find(flt).sort(sort).skip(skip).limit(limit)]
    examined = candidates(enc, "shop.orders") - before
    want = [d["_id"] for d in twins.orders.find(flt).sort(sort).skip(skip).limit(limit)]
    assert got == want
    assert examined <= 1_000, examined


def test_tags_are_stored_beside_the_envelope_and_never_returned(enc, loaded, backend):
    shop, twins = loaded
    with client(f"mongodb://127.0.0.1:{backend.port}") as direct:
        stored = direct.shop.orders.find_one({"_id": 1})
        tags = stored["__fle"]["price"]
        assert len(tags) == 17 and all(len(t) == 16 for t in tags)  # one per level of a 17-bit grid
        assert direct.shop.orders.find_one({"_id": 2})["__fle"]["price"] != tags
        assert direct.shop.orders.find_one({"_id": N + 11})["__fle"]["price"] == [stored_none(direct)]
    doc = shop.orders.find_one({"_id": 1})
    assert "__fle" not in doc and doc["price"] == twins.orders.find_one({"_id": 1})["price"]
    assert all("__fle" not in d for d in shop.orders.find({"price": {"$lt": 100}}))
    pushed = list(shop.orders.aggregate([{"$match": {"_id": {"$lt": 3}}},
                                         {"$group": {"_id": None, "all": {"$push": "$$ROOT"}}}]))
    assert pushed and all("__fle" not in d for d in pushed[0]["all"]), pushed
    after = shop.orders.find_one_and_update({"_id": 2}, {"$set": {"note": "seen"}}, return_document=True)
    assert "__fle" not in after


def stored_none(direct):
    """The "none" tag of shop.orders.price, as the document holding a string stores it."""
    return direct.shop.orders.find_one({"_id": N + 7})["__fle"]["price"][0]


def test_clients_may_not_name_the_tag_field(loaded):
    shop, _ = loaded
    for attempt in (lambda: shop.orders.insert_one({"_id": "x", "price": 1, "__fle": {"price": []}}),
                    lambda: shop.orders.update_one({"_id": 1}, {"$set": {"__fle.price": []}}),
                    lambda: shop.orders.update_one({"_id": 1}, {"$unset": {"__fle": ""}}),
                    lambda: shop.orders.update_one({"_id": 1}, {"$rename": {"note": "__fle"}}),
                    lambda: shop.orders.update_one({"_id": 1}, [{"$set": {"__fle": {"price": []}}}]),
                    lambda: shop.orders.update_one({"_id": 1}, [{"$replaceWith": {"$mergeObjects": [
                        "$$ROOT", {"__fle": {"price": []}}]}}]),
                    lambda: shop.orders.replace_one({"_id": 1}, {"price": 5, "__fle": {"price": []}}),
                    lambda: list(shop.orders.find({}, {"__fle": 1})),
                    lambda: list(shop.orders.find({"__fle.price": {"$exists": True}})),
                    lambda: list(shop.orders.find({"$or": [{"__fle": None}, {"k": 1}]})),
                    lambda: list(shop.orders.find({}).sort("__fle.price", 1)),
                    lambda: list(shop.orders.aggregate([{"$project": {"t": "$__fle"}}])),
                    lambda: shop.orders.create_index("__fle.price", unique=True),
                    lambda: list(shop.orders.watch())):
        with pytest.raises(OperationFailure):
            attempt()


def test_every_write_keeps_the_tags_true(enc, loaded):
    shop, twins = loaded
    both = (shop.orders, twins.orders)
    for c in both:
        c.update_one({"_id": 3}, {"$set": {"price": 31_337}})
        c.update_one({"_id": 4}, {"$unset": {"price": ""}})
        c.update_one({"_id": 5}, {"$inc": {"price": 100_000}})  # carried out by the proxy: off the grid now
        c.replace_one({"_id": 6}, {"price": 31_338, "note": "replaced"})
        c.update_one({"_id": "up"}, {"$set": {"price": 31_339}}, upsert=True)
        c.update_one({"_id": "seed", "price": 31_340}, {"$set": {"note": "seeded"}}, upsert=True)
        c.find_one_and_update({"_id": 7}, {"$set": {"price": 31_341}})
        c.update_many({"k": 6, "price": {"$lt": 500}}, {"$set": {"price": 31_342}})
        c.bulk_write([pymongo.UpdateOne({"_id": 8}, {"$set": {"price": 31_343}}),
                      pymongo.InsertOne({"_id": "bulk", "price": 31_344})])
    for flt in ({"price": {"$gte": 31_337, "$lte": 31_344}}, {"price": {"$gt": TOP}}, {"price": {"$exists": False}},
                {"price": {"$lt": 500}}):
        same(shop, twins, flt)


def test_documents_written_before_the_index_are_still_found(enc, kms, loaded):
    shop, twins = loaded
    reload(enc, policy(kms, indexed=False))
    try:
        shop.later.drop()
        shop.later.insert_many([{"_id": i, "price": i * 10} for i in range(100)])
    finally:
        reload(enc, policy(kms))
    shop.later.insert_many([{"_id": 100 + i, "price": i * 10 + 5} for i in range(100)])
    got = ids(shop.later.find({"price": {"$gte": 200, "$lt": 300}}))
    assert sorted(got) == list(range(20, 30)) + list(range(120, 130))


def test_a_finer_grid_with_sparse_levels(enc, loaded):
    shop, _ = loaded
    rnd = random.Random(9)
    values = [round(rnd.uniform(-1100, 1100), 3) for _ in range(2000)]
    shop.fine.drop()
    shop.fine.insert_many([{"_id": i, "w": v} for i, v in enumerate(values)])
    for lo, hi in ((-1.005, 3.25), (999.99, 1000.0), (-1200, -999.5), (12.345, 12.345)):
        want = sorted(i for i, v in enumerate(values) if lo <= v <= hi)
        assert sorted(ids(shop.fine.find({"w": {"$gte": lo, "$lte": hi}}))) == want, (lo, hi)


def test_the_server_sees_tags_never_the_bounds(enc, loaded, relay):
    shop, _ = loaded
    relay.clear()
    shop.orders.find_one({"price": {"$gt": 12_345.678, "$lt": 12_399.5}})
    sent = relay.captured()
    assert struct.pack("<d", 12_345.678) not in sent and struct.pack("<d", 12_399.5) not in sent
    assert b"__fle.price" in sent


def test_rewrap_builds_the_index_and_moves_tags_with_the_key(workdir, kms, backend):
    """An index added to a collection that has documents: rewrap gives them tags (the build),
    in place and only once; after a key change, rewrap re-seals every value and makes its tags
    under the new key, so once the previous key is dropped every range still finds every
    document."""
    old, new = kms.keys["AES-256"], kms.keys["ARIA-256"]
    plain = "{ price: {} }"
    indexed = "{ price: { index: { range: { min: 0, max: 10000 } } } }"
    p = EncryptingProxy(workdir, backend.port, kms, f"  shop.build: {{ key: {old}, fields: {plain} }}\n",
                        name="proxy-range-build", admin=True).start()
    try:
        with client(p.uri()) as c, client(f"mongodb://127.0.0.1:{backend.port}") as direct:
            c.shop.build.drop()
            c.shop.build.insert_many([{"_id": i, "price": (i * 37) % 10_000} for i in range(3000)])
            reload(p, f"  shop.build: {{ key: {old}, fields: {indexed} }}\n")
            flt = {"price": {"$gte": 5000, "$lt": 5100}}
            want = sorted(i for i in range(3000) if 5000 <= (i * 37) % 10_000 < 5100)
            before = candidates(p, "shop.build")
            assert sorted(d["_id"] for d in c.shop.build.find(flt)) == want
            assert candidates(p, "shop.build") - before == 3000, "no document has tags yet: each is a candidate"

            r = rewrap(p.config, "shop.build")
            assert r.returncode == 0 and "3,000 rewritten" in r.stdout and "tags 3,000" in r.stdout, r.stdout + r.stderr
            assert len(direct.shop.build.find_one({"_id": 7})["__fle"]["price"]) == 14
            again = rewrap(p.config, "shop.build", "--dry-run")
            assert "0 would be rewritten" in again.stdout, again.stdout
            before = candidates(p, "shop.build")
            assert sorted(d["_id"] for d in c.shop.build.find(flt)) == want
            assert candidates(p, "shop.build") - before <= 3 * len(want), "the tags narrow it now"

            reload(p, f"  shop.build: {{ key: {new}, previousKeys: [{old}], fields: {indexed} }}\n")
            c.shop.build.insert_one({"_id": "new", "price": 5050})  # under the new key, tags too
            want = sorted(want + ["new"], key=repr)
            assert sorted((d["_id"] for d in c.shop.build.find(flt)), key=repr) == want, "tags under both keys asked"
            r = rewrap(p.config, "shop.build")
            assert r.returncode == 0 and "3,000 rewritten" in r.stdout, r.stdout + r.stderr
            # dropping a previous key is refused by a reload (the policy's downgrade check): a restart
            p.stop()
            p.write(f"  shop.build: {{ key: {new}, fields: {indexed} }}\n")
            p.start()
            wait_for_port(p.admin_port, p.proc)  # it opens just after the data port
            before = candidates(p, "shop.build")
            assert sorted((d["_id"] for d in c.shop.build.find(flt)), key=repr) == want
            assert candidates(p, "shop.build") - before <= 3 * len(want)
    finally:
        p.stop()


class PriceWriters(Threads):
    """Four threads setting prices through the proxy while rewrap runs, each document's last
    acknowledged price remembered (one writer per document at a time)."""

    def __init__(self, uri, n):
        self.client = client(uri, maxPoolSize=4)
        self.coll = self.client.shop.live
        self.n = n
        self.expected, self.errors = {}, []
        super().__init__(4)

    def run(self, i):
        rnd = random.Random(i)
        while not self.stop.is_set():
            j = rnd.randrange(self.n)
            price = rnd.randrange(10_000)
            try:
                with self.lock:
                    self.coll.update_one({"_id": j}, {"$set": {"price": price}})
                    self.expected[j] = price
            except Exception as e:  # any failure counts
                self.errors.append(repr(e))
            time.sleep(0.002)


def test_rewrap_builds_the_index_while_the_application_writes(workdir, kms, backend):
    """The index added to a live collection: rewrap gives 3,000 documents their tags (--parallel
    4) while four threads set prices through the proxy; a write between rewrap's read and its
    conditional update makes it read the document again, so afterwards every document's tags are
    the ones its price gives (a dry run recomputes them all and finds nothing to do) and every
    range answers as the prices written say."""
    key = kms.keys["AES-256"]
    plain = f"  shop.live: {{ key: {key}, fields: {{ price: {{}} }} }}\n"
    indexed = f"  shop.live: {{ key: {key}, fields: {{ price: {{ index: {{ range: {{ min: 0, max: 9999 }} }} }} }} }}\n"
    n = 3000
    p = EncryptingProxy(workdir, backend.port, kms, plain, name="proxy-range-live").start()
    try:
        with client(p.uri()) as c:
            c.shop.live.drop()
            c.shop.live.insert_many([{"_id": j, "price": (j * 7) % 10_000} for j in range(n)])
            reload(p, indexed)
            with PriceWriters(p.uri(), n) as app:
                time.sleep(0.5)
                r = rewrap(p.config, "shop.live", "--batch", "200", "--parallel", "4")
                time.sleep(0.5)
            assert r.returncode == 0 and "tags" in r.stdout, r.stdout + r.stderr
            assert len(app.expected) > 50 and not app.errors, (len(app.expected), app.errors[:3])
            dry = rewrap(p.config, "shop.live", "--dry-run")
            assert dry.returncode == 0 and " 0 would be rewritten" in dry.stdout, dry.stdout + dry.stderr
            prices = {j: app.expected.get(j, (j * 7) % 10_000) for j in range(n)}
            for lo, hi in ((0, 100), (5_000, 5_300), (9_900, 10_000)):
                want = sorted(j for j, v in prices.items() if lo <= v < hi)
                assert sorted(d["_id"] for d in c.shop.live.find({"price": {"$gte": lo, "$lt": hi}})) == want
    finally:
        p.stop()


def test_a_date_index_answers_date_ranges_and_sorts(enc, loaded):
    """type: date: dates placed by their milliseconds; numbers, strings and null store "none", a
    date off the grid and an array "other"; ranges, $in and sorts with a limit as for numbers."""
    shop, twins = loaded
    rnd = random.Random(11)
    start = datetime.datetime(2020, 1, 1)
    docs = [{"_id": i, "at": start + datetime.timedelta(seconds=rnd.randrange(10 * 365 * 86400))} for i in range(3000)]
    docs += [{"_id": 3000, "at": 5}, {"_id": 3001, "at": "2024-01-01"}, {"_id": 3002, "at": None},
             {"_id": 3003, "at": datetime.datetime(2031, 5, 1)}, {"_id": 3004, "at": datetime.datetime(1999, 1, 1)},
             {"_id": 3005, "at": [datetime.datetime(2024, 6, 1, 12), datetime.datetime(2024, 6, 1, 13)]}, {"_id": 3006}]
    for c in (shop.events, twins.events):
        c.drop()
        c.insert_many(docs)
    day = {"$gte": datetime.datetime(2024, 6, 1), "$lt": datetime.datetime(2024, 6, 2)}
    for flt in ({"at": day}, {"at": {"$gt": datetime.datetime(2029, 12, 25)}}, {"at": {"$lt": datetime.datetime(2020, 1, 3)}},
                {"at": {"$in": [docs[5]["at"], docs[6]["at"]]}}, {"at": {"$gt": 5}}):
        before = candidates(enc, "shop.events")
        got = ids(shop.events.find(flt))
        assert got == ids(twins.events.find(flt)), flt
        if flt != {"at": {"$gt": 5}}:  # a number's bound: nothing for a date index to read, every candidate
            assert candidates(enc, "shop.events") - before <= 3 * len(got) + 50, flt
    for direction in (1, -1):
        before = candidates(enc, "shop.events")
        got = [d["_id"] for d in shop.events.find({}).sort([("at", direction), ("_id", 1)]).limit(10)]
        assert got == [d["_id"] for d in twins.events.find({}).sort([("at", direction), ("_id", 1)]).limit(10)]
        assert candidates(enc, "shop.events") - before <= 1_000
