"""Queries the server cannot evaluate on encrypted fields (ranges, regexes, sorts, projections of
parts of an encrypted value), evaluated by the proxy on the decrypted candidates the server's part
of the filter selects. Each answer is held against the same query on a plaintext twin of the
data, stored directly in the backend; a recording relay shows what the server was sent."""

import pytest
from bson import Int64, Regex
from bson.decimal128 import Decimal128
from pymongo import ASCENDING, DESCENDING
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

SECRET_PREFIX = "zq7"  # a residual constant that must never reach the server


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  enc.mongo_rules: {{ key: {key}, fields: {{ x: {{}}, tags: {{}} }} }}\n"
            f"  enc.large: {{ key: {key}, fields: {{ x: {{}} }} }}\n"
            f"  enc.det: {{ key: {key}, fields: {{ x: {{ deterministic: true }}, tags: {{}}, inner.v: {{}} }} }}\n"
            f"  enc.rnd: {{ key: {key}, fields: {{ x: {{}}, tags: {{}}, inner.v: {{}} }} }}\n"
            f"  enc.small: {{ key: {key}, fields: {{ x: {{}} }}, maxScanDocuments: 50 }}\n"
            f"  enc.many: {{ key: {key}, fields: {{ x: {{}}, y: {{}} }} }}\n")


@pytest.fixture(scope="module")
def enc(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-evaluated").start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def via(enc):
    c = client(enc.uri())
    yield c.enc
    c.close()


@pytest.fixture(scope="module")
def plain(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.plain_twins
    c.close()


def documents(deterministic=False):
    """Mixed types in x: numbers of every kind, strings, null, missing, arrays, documents. A
    deterministic x holds no arrays: an array is one value (docs/query-model.md, "Semantics worth
    knowing"); nor two numbers of different types that are equal (numbers across types are
    test_numeric_equality.py's)."""
    xs = [1, 2.5, Int64(3), Decimal128("4"), -7, 10, 11.0 if deterministic else 10.0, "apple", "Banana", "cherry", f"{SECRET_PREFIX}-s",
          None, "grape" if deterministic else [1, 5], [], "kiwi" if deterministic else ["apple", 5], {"a": 1}, True, 0]
    docs = []
    for i, x in enumerate(xs):
        docs.append({"_id": i, "n": i % 4, "x": x, "tags": ["t%d" % (i % 3), "u"], "inner": {"v": i * 1.5, "w": i}})
    docs.append({"_id": len(xs), "n": 1, "tags": []})  # no x at all
    return docs


@pytest.fixture(scope="module")
def loaded(via, plain):
    for name in ("det", "rnd"):
        via[name].drop()
        via[name].insert_many(documents(name == "det"))
        plain[name].drop()
        plain[name].insert_many(documents(name == "det"))
    return via, plain


FILTERS = [
    {"x": {"$gt": 2}},
    {"x": {"$gte": 2, "$lt": 10}},
    {"x": {"$lte": "b"}},
    {"x": {"$ne": 10}},
    {"x": {"$nin": [1, "apple"]}},
    {"x": {"$in": [10, "cherry"]}},
    {"x": {"$regex": "^[a-c]", "$options": "i"}},
    {"x": Regex("an", "")},
    {"x": {"$exists": False}},
    {"x": None},
    {"x": {"$type": "string"}},
    {"x": {"$size": 2}},
    {"x": {"$elemMatch": {"$gt": 10}}},
    {"x": {"$mod": [2, 0]}},
    {"x": {"$not": {"$gt": 2}}},
    {"$or": [{"n": 0}, {"x": {"$lt": 2}}]},
    {"$and": [{"n": {"$in": [1, 2]}}, {"x": {"$gt": 0}}]},
    {"n": 1, "inner.v": {"$gt": 3}},
    {"tags": {"$all": ["u", "t1"]}},
    {"tags": {"$size": 0}},
    {"x.a": 1},
]


def ids(docs):
    return [d["_id"] for d in docs]


@pytest.mark.parametrize("coll", ["det", "rnd"])
@pytest.mark.parametrize("flt", FILTERS, ids=[str(f) for f in FILTERS])
def test_filters_answer_as_the_server_does_on_plaintext(loaded, coll, flt):
    via, plain = loaded
    assert sorted(ids(via[coll].find(flt))) == sorted(ids(plain[coll].find(flt)))
    assert via.command("count", coll, query=flt)["n"] == plain.command("count", coll, query=flt)["n"]
    for key in ("x", "tags", "inner.v", "n"):
        assert via[coll].distinct(key, flt) == plain[coll].distinct(key, flt), key


SORTS = [
    ([("x", ASCENDING), ("_id", ASCENDING)], 0, 0),
    ([("x", DESCENDING), ("_id", ASCENDING)], 2, 5),
    ([("inner.v", DESCENDING)], 0, 3),
    ([("n", ASCENDING), ("x", DESCENDING), ("_id", DESCENDING)], 1, 0),
]


@pytest.mark.parametrize("coll", ["det", "rnd"])
@pytest.mark.parametrize("sort,skip,limit", SORTS)
def test_sorts_skips_and_limits_answer_in_the_servers_order(loaded, coll, sort, skip, limit):
    via, plain = loaded
    got = list(via[coll].find({}, sort=sort, skip=skip, limit=limit))
    want = list(plain[coll].find({}, sort=sort, skip=skip, limit=limit))
    assert got == want


@pytest.mark.parametrize("projection", [{"x": 1}, {"x": 0, "inner": 0}, {"inner.v": 1, "_id": 0},
                                        {"tags": {"$slice": 1}, "n": 1}, {"tags": {"$slice": -1}, "x": 1}])
def test_projections_of_encrypted_fields(loaded, projection):
    via, plain = loaded
    flt = {"x": {"$gte": 0}}
    assert list(via.rnd.find(flt, projection, sort=[("_id", 1)])) == list(plain.rnd.find(flt, projection,
                                                                                        sort=[("_id", 1)]))


def test_where_the_backend_departs_from_mongodb_the_proxy_answers_as_mongodb_does(via):
    """mongo-java-server differs from mongod in places; the proxy follows MongoDB's documented
    semantics, so these answers are held against the documentation, not the backend."""
    via.mongo_rules.drop()
    via.mongo_rules.insert_many([{"_id": 1, "x": [1, 20], "tags": ["a", "b"], "n": 1}, {"_id": 2, "x": 30}])
    # each condition on an array may be met by a different element ("Query an Array")
    assert [d["_id"] for d in via.mongo_rules.find({"x": {"$gte": 2, "$lt": 10}})] == [1]
    # $all: [null] is $and of {tags: null}: it matches a document without the field
    assert [d["_id"] for d in via.mongo_rules.find({"tags": {"$all": [None]}})] == [2]
    # a $slice alone projects every other field too (MongoDB 4.4+)
    assert via.mongo_rules.find_one({"_id": 1, "x": {"$gt": 0}}, {"tags": {"$slice": 1}}) == \
        {"_id": 1, "x": [1, 20], "tags": ["a"], "n": 1}


def test_no_residual_constant_reaches_the_server(loaded, relay):
    via, _ = loaded
    relay.clear()
    found = list(via.rnd.find({"n": 2, "x": {"$regex": "^" + SECRET_PREFIX}}).sort("x", -1))
    assert [d["x"] for d in found] == [f"{SECRET_PREFIX}-s"]
    sent = relay.captured()
    assert SECRET_PREFIX.encode() not in sent
    assert b"$regex" not in sent and b"sort" not in sent
    # the server's part of the filter did go: the condition on the plain field
    assert b"\x10n\x00\x02\x00\x00\x00" in sent


def test_the_scan_budget_refuses_and_says_how_to_narrow(via):
    via.small.drop()
    via.small.insert_many([{"_id": i, "n": i % 10, "x": i} for i in range(120)])
    with pytest.raises(OperationFailure) as e:
        list(via.small.find({"x": {"$gt": 5}}))
    assert e.value.code == 9720012, e.value.details
    assert e.value.details["codeName"] == "FleProxyScanBudgetExceeded"
    assert "enc.small" in str(e.value) and "50" in str(e.value) and "plain field" in str(e.value)
    # a condition the server can evaluate narrows the candidates under the budget
    got = list(via.small.find({"n": 3, "x": {"$gt": 50}}).sort("x", 1))
    assert [d["_id"] for d in got] == [53, 63, 73, 83, 93, 103, 113]


def test_candidates_come_in_several_batches(loaded, via):
    # many candidates over 16 KiB documents: the server's batches are cut by size, the proxy reads on
    via.rnd_big.drop()
    big = "y" * 16_000
    via.rnd_big.insert_many([{"_id": i, "x": i, "pad": big} for i in range(1500)])
    got = list(via.rnd_big.find({"x": {"$gte": 1490}}, {"pad": 0}).sort("x", -1))
    assert [d["_id"] for d in got] == list(range(1499, 1489, -1))


@pytest.fixture(scope="module")
def many(via, plain):
    """3,000 documents in many batches, x drawn from few values (ties everywhere), y a second key."""
    import random
    r = random.Random(41)
    docs = [{"_id": i, "x": r.randrange(20), "y": r.choice(["a", "b", None]), "pad": "p" * r.randrange(1, 900)}
            for i in range(3000)]
    for target in (via.many, plain.many):
        target.drop()
        target.insert_many(docs)
    assert isinstance(plain.client.enc.many.find_one()["x"], bytes)  # stored sealed: the proxy evaluates
    return via.many, plain.many


@pytest.mark.parametrize("sort,skip,limit", [
    ([("x", ASCENDING), ("_id", DESCENDING)], 0, 1),
    ([("x", DESCENDING), ("y", ASCENDING), ("_id", ASCENDING)], 0, 50),
    ([("x", ASCENDING), ("_id", ASCENDING)], 700, 30),
    ([("y", DESCENDING), ("x", ASCENDING), ("_id", DESCENDING)], 5, -20),
    ([("x", ASCENDING), ("_id", ASCENDING)], 0, 2500),
])
def test_a_sort_with_a_limit_over_many_candidates_keeps_the_best(many, sort, skip, limit):
    # the proxy keeps only the best skip + limit of the matches as their batches come
    # (MatchedCandidates): the answer is every match's sorted window, as the server gives it
    via, plain = many
    flt = {"x": {"$gte": 3}}
    got = list(via.find(flt, sort=sort, skip=skip, limit=limit))
    want = list(plain.find(flt, sort=sort, skip=skip, limit=limit))
    assert [d["_id"] for d in got] == [d["_id"] for d in want]
    assert got == want


def test_ties_of_a_sort_with_a_limit_keep_the_values_order(many):
    via, plain = many
    got = list(via.find({"x": {"$lt": 15}}, {"x": 1}).sort("x", DESCENDING).limit(40))
    want = list(plain.find({"x": {"$lt": 15}}, {"x": 1}).sort("x", DESCENDING).limit(40))
    assert [d["x"] for d in got] == [d["x"] for d in want]  # which of equal keys: the server's choice


def test_a_count_and_a_limit_without_sort_over_many_candidates(many):
    via, plain = many
    for flt in ({"x": {"$gt": 7}}, {"x": {"$in": [1, 2]}, "y": "a"}, {"x": {"$gt": 100}}):
        assert via.count_documents(flt) == plain.count_documents(flt)
        assert via.count_documents(flt, skip=40, limit=30) == plain.count_documents(flt, skip=40, limit=30)
        got = [d["_id"] for d in via.find(flt).skip(3).limit(25)]
        assert got == [d["_id"] for d in plain.find(flt).skip(3).limit(25)]
        assert sorted(via.distinct("y", flt), key=str) == sorted(plain.distinct("y", flt), key=str)


@pytest.mark.parametrize("flt", [{"$where": "this.x > 1"}, {"$expr": {"$function": {"body": "1", "args": ["$x"], "lang": "js"}}}])
def test_what_neither_can_evaluate_is_refused(loaded, flt):
    via, _ = loaded
    with pytest.raises(OperationFailure) as e:
        list(via.rnd.find(flt))
    assert e.value.code in (9720010, 9720011)


def test_the_default_budget_stops_a_scan_of_100000_documents_at_10001(via, relay):
    via.large.drop()
    for start in range(0, 100_000, 20_000):
        via.large.insert_many([{"_id": i, "x": i} for i in range(start, start + 20_000)], ordered=False)
    relay.clear()
    with pytest.raises(OperationFailure) as e:
        list(via.large.find({"x": {"$lt": 5}}))
    assert e.value.code == 9720012 and "10000" in str(e.value), e.value.details
    sent = relay.captured()
    # the server was asked for the budget and one more, never for the whole collection, and in
    # batches that fit in a reply: 101 first, then getMores sized by the candidates' bytes
    assert b"\x10limit\x00\x11\x27\x00\x00" in sent  # int32 10001
    assert b"\x10batchSize\x00\x65\x00\x00\x00" in sent  # int32 101
    # the server runs a pipeline's leading sort and limit by plain fields: 10 candidates, not 100,000
    relay.clear()
    got = list(via.large.aggregate([{"$sort": {"_id": -1}}, {"$limit": 10},
                                    {"$group": {"_id": None, "s": {"$sum": "$x"}}}]))
    assert got == [{"_id": None, "s": sum(range(99_990, 100_000))}]
    sent = relay.captured()
    assert b"\x03sort\x00" in sent and b"\x12limit\x00\x0a\x00\x00\x00\x00\x00\x00\x00" in sent


def by_id(docs):
    return sorted(docs, key=lambda d: repr(d.get("_id")))


PIPELINES = [
    [{"$match": {"x": {"$gte": 0}}}, {"$group": {"_id": None, "total": {"$sum": "$x"}, "n": {"$sum": 1}}}],
    [{"$group": {"_id": "$n", "total": {"$sum": "$x"}, "mx": {"$max": "$x"}, "mn": {"$min": "$x"}}}],
    [{"$match": {"n": {"$lt": 3}}}, {"$group": {"_id": "$n", "xs": {"$push": "$x"}, "c": {"$sum": 1}}}],
    [{"$match": {"x": {"$type": "number"}}}, {"$sort": {"x": -1, "_id": 1}}, {"$limit": 3},
     {"$project": {"x": 1, "v": "$inner.v"}}],
    [{"$match": {"x": {"$regex": "^[a-c]", "$options": "i"}}}, {"$count": "strings"}],
    [{"$sortByCount": "$n"}],
    [{"$match": {"x": {"$lt": 5}}}, {"$addFields": {"copy": "$x", "seven": 7}}, {"$unset": "tags"},
     {"$sort": {"_id": 1}}],
    # a prefix the server runs (sort, skip and limit by plain fields), the rest in the proxy in its order
    [{"$match": {"n": {"$lt": 3}}}, {"$sort": {"inner.w": -1}}, {"$skip": 1}, {"$limit": 8},
     {"$match": {"x": {"$type": "number"}}}, {"$sort": {"_id": 1}}],
    [{"$sort": {"_id": 1}}, {"$limit": 6}, {"$group": {"_id": None, "xs": {"$push": "$x"}}}],
    [{"$match": {"n": 1}}, {"$match": {"x": {"$gte": 0}}}, {"$sort": {"_id": -1}}, {"$project": {"x": 1}}],
    # expression operators over encrypted fields, in $project, $addFields (a computed sort key), $group, $expr
    # (numbers sort below strings, arrays and the rest: {$lt: ["$x", ""]} keeps null, missing and numbers)
    [{"$match": {"$expr": {"$and": [{"$gt": ["$x", 1]}, {"$lt": ["$x", ""]}]}}},
     {"$project": {"d": {"$multiply": ["$x", 2]}, "m": {"$mod": ["$n", 3]}}}, {"$sort": {"_id": 1}}],
    [{"$match": {"$expr": {"$lt": ["$x", ""]}}},
     {"$addFields": {"k": {"$cond": [{"$gt": ["$x", 3]}, {"$subtract": [0, "$x"]}, -100]}}},
     {"$sort": {"k": 1, "_id": 1}}, {"$project": {"k": 1}}],
    [{"$group": {"_id": {"$mod": ["$n", 2]}, "t": {"$sum": {"$add": ["$n", 1]}}}}],
    [{"$project": {"r": "$$ROOT", "big": {"$gte": ["$x", 3]}}}, {"$sort": {"_id": 1}}],
]


@pytest.mark.parametrize("coll", ["det", "rnd"])
@pytest.mark.parametrize("pipeline", PIPELINES, ids=[str(i) for i in range(len(PIPELINES))])
def test_aggregations_answer_as_the_server_does_on_plaintext(loaded, coll, pipeline):
    via, plain = loaded
    got, want = list(via[coll].aggregate(pipeline)), list(plain[coll].aggregate(pipeline))
    if any("$sort" in s or "$sortByCount" in s for s in pipeline):
        assert got == want
    else:
        assert by_id(got) == by_id(want)


@pytest.mark.parametrize("flt", [{"x": {"$gt": 2}}, {"tags": "u", "x": {"$type": "string"}}, {}])
def test_count_documents_works_with_conditions_on_encrypted_fields(loaded, flt):
    via, plain = loaded
    assert via.rnd.count_documents(flt) == plain.rnd.count_documents(flt)


def test_aggregation_stages_the_proxy_does_not_run_stay_refused(loaded):
    via, _ = loaded
    with pytest.raises(OperationFailure) as e:
        list(via.rnd.aggregate([{"$match": {"x": {"$gt": 1}}}, {"$bucketAuto": {"groupBy": "$x", "buckets": 2}}]))
    assert e.value.code in (9720010, 9720011)
    with pytest.raises(OperationFailure):
        list(via.rnd.aggregate([{"$group": {"_id": None, "t": {"$sum": {"$function": {"body": "1", "args": ["$x"], "lang": "js"}}}}}]))


def test_mod_of_a_decimal_is_a_decimal(loaded):
    # MongoDB's answer, written out: the embedded backend departs from it (it returns a double)
    via, _ = loaded
    got = list(via.rnd.aggregate([{"$match": {"_id": 3}}, {"$project": {"m": {"$mod": ["$x", 3]}}}]))
    assert got == [{"_id": 3, "m": Decimal128("1")}]


def test_a_find_with_expr_over_an_encrypted_field_is_evaluated(loaded):
    via, plain = loaded
    flt = {"x": {"$type": "number"}, "$expr": {"$gt": ["$x", 1]}}
    assert by_id(via.rnd.find(flt)) == by_id(plain.rnd.find(flt))


def test_an_expression_mongod_fails_on_is_refused_without_the_value(loaded):
    via, _ = loaded
    with pytest.raises(OperationFailure) as e:
        list(via.rnd.aggregate([{"$project": {"v": {"$divide": [1, {"$multiply": ["$x", 0]}]}}}]))
    assert e.value.code in (9720010, 9720011), e.value.details


def test_an_answer_comes_in_the_batches_the_client_asks_for(loaded):
    via, plain = loaded
    flt, order = {"x": {"$type": "number"}}, [("x", ASCENDING), ("_id", ASCENDING)]
    want = list(plain.rnd.find(flt).sort(order))
    cursor = via.rnd.find(flt).sort(order).batch_size(2)
    first = next(cursor)
    assert cursor.cursor_id not in (None, 0)  # the rest is held by the proxy as its own cursor
    assert [first] + list(cursor) == want
    assert cursor.cursor_id == 0
    assert list(via.rnd.aggregate([{"$match": flt}, {"$sort": dict(order)}], batchSize=0)) == \
        list(plain.rnd.aggregate([{"$match": flt}, {"$sort": dict(order)}]))
    # singleBatch: the first batch only, no cursor left open
    reply = via.command("find", "rnd", filter=flt, sort=dict(order), batchSize=3, singleBatch=True)
    assert reply["cursor"]["id"] == 0 and len(reply["cursor"]["firstBatch"]) == 3


def test_an_answer_over_16_mib_is_read_through_the_proxys_cursor(via):
    via.rnd_wide.drop()
    pad = "w" * 16_000
    via.rnd_wide.insert_many([{"_id": i, "x": 1499 - i, "pad": pad} for i in range(1500)])  # 24 MB
    got = list(via.rnd_wide.find({"x": {"$gte": 0}}).sort("x", ASCENDING))
    assert [d["x"] for d in got] == list(range(1500)) and all(d["pad"] == pad for d in got)


def test_a_closed_cursor_of_the_proxy_is_forgotten(loaded):
    via, _ = loaded
    cursor = via.rnd.find({"x": {"$type": "number"}}).batch_size(1)
    next(cursor)
    held = cursor.cursor_id
    assert held not in (None, 0)
    cursor.close()  # killCursors, answered by the proxy
    with pytest.raises(OperationFailure) as e:
        via.command("getMore", held, collection="rnd")
    assert e.value.code == 9720011 and "did not open" in str(e.value), e.value.details  # as any unknown cursor


def test_one_connection_cannot_hold_every_cursor_and_its_cursors_go_with_it(loaded, enc):
    """issue 41: a connection outside a session holds at most 100 of the proxy's cursors, an identity
    250, and the cursors of a connection outside a session are forgotten when it closes — so one
    client opening cursors and leaving cannot refuse everyone else's queries for ten minutes."""
    import socket

    import bson
    import wire

    def open_cursors(sock, count):
        for i in range(count):
            sock.sendall(wire.op_msg({"find": "rnd", "filter": {"x": {"$type": "number"}}, "batchSize": 1,
                                      "$db": "enc"}, request_id=i + 1))
            body = bson.decode(wire.read_reply(sock)[1][5:])
            if body.get("ok") != 1:
                return i, body
            assert body["cursor"]["id"] != 0
        return count, None

    first = socket.create_connection(("127.0.0.1", enc.port))
    opened, refused = open_cursors(first, 101)
    assert opened == 100 and refused["code"] == 9720013 and "this connection or identity" in refused["errmsg"]
    first.close()
    # had the first connection's cursors stayed, the identity's cap (250) would stop the third at 50
    with socket.create_connection(("127.0.0.1", enc.port)) as second, \
            socket.create_connection(("127.0.0.1", enc.port)) as third:
        assert open_cursors(second, 100) == (100, None)
        assert open_cursors(third, 100) == (100, None)
    via, plain = loaded
    flt = {"x": {"$type": "number"}}
    assert list(via.rnd.find(flt).sort("_id", ASCENDING).batch_size(1)) == list(plain.rnd.find(flt).sort("_id"))
