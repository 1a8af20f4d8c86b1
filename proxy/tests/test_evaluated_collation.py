"""Queries with a collation other than simple on encrypted fields, evaluated by the proxy with ICU
(docs/query-model.md, "Collations"): find, count, sort, $group and distinct, with x randomized and
x deterministic. The expected answers are written out from MongoDB's documented collation
semantics (reference/collation): the embedded backend does not implement MongoDB's collations (it
compares by bytes under {locale: "en_US", strength: 2} and accepts strength 6), so it cannot serve
as the oracle here (test_the_backend_is_no_oracle shows how it departs)."""
import pytest
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

XS = ["ping", "PING", "Ping", "pong", "cafe", "café", "Cafe", "10", "2", "black-bird", "blackbird", "a", "A", 5]
EN2 = {"locale": "en_US", "strength": 2}


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  coll.rnd: {{ key: {key}, fields: {{ x: {{}} }} }}\n"
            f"  coll.det: {{ key: {key}, fields: {{ x: {{ deterministic: true }} }} }}\n")


@pytest.fixture(scope="module")
def via(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-collation").start()
    c = client(p.uri())
    for name in ("rnd", "det"):
        c.coll[name].drop()
        c.coll[name].insert_many([{"_id": i, "n": i % 2, "x": x} for i, x in enumerate(XS)]
                                 + [{"_id": len(XS), "n": 0}])
    yield c.coll
    c.close()
    p.stop()


def xs(cursor):
    return [d.get("x") for d in cursor]


@pytest.fixture(params=["rnd", "det"])
def coll(request, via):
    return via[request.param]


def test_equality_at_strength_2_ignores_case(coll):
    assert sorted(xs(coll.find({"x": "PING"}, collation=EN2))) == ["PING", "Ping", "ping"]
    assert sorted(xs(coll.find({"x": {"$eq": "cAfE"}}, collation=EN2))) == ["Cafe", "cafe"]  # not café
    assert coll.count_documents({"x": "PING"}, collation=EN2) == 3


def test_equality_at_strength_1_ignores_accents_too(coll):
    assert sorted(xs(coll.find({"x": "CAFE"}, collation={"locale": "fr", "strength": 1}))) == ["Cafe", "cafe", "café"]
    one_with_case = {"locale": "fr", "strength": 1, "caseLevel": True}
    assert sorted(xs(coll.find({"x": "cafe"}, collation=one_with_case))) == ["cafe", "café"]


def test_in_nin_and_ne_under_the_collation(coll):
    assert sorted(xs(coll.find({"x": {"$in": ["CAFE", "PONG"]}}, collation=EN2))) == ["Cafe", "cafe", "pong"]
    left = xs(coll.find({"x": {"$nin": ["ping", "a", 5]}}, collation=EN2))
    assert sorted(map(str, left)) == sorted(["pong", "cafe", "café", "Cafe", "10", "2", "black-bird", "blackbird",
                                             "None"])
    assert coll.count_documents({"x": {"$ne": "PiNg"}}, collation=EN2) == len(XS) + 1 - 3


def test_ranges_compare_letters_as_letters(coll):
    # by bytes every uppercase letter sorts before every lowercase one; under en they interleave
    assert sorted(xs(coll.find({"x": {"$gte": "B", "$lt": "D"}}, collation={"locale": "en"}))) == sorted(
        ["black-bird", "blackbird", "Cafe", "cafe", "café"])
    assert sorted(xs(coll.find({"x": {"$gte": "B", "$lt": "D"}}))) == ["Cafe"]


def test_sorts_follow_the_collation(coll):
    nums = {"x": {"$in": ["10", "2"]}}
    assert xs(coll.find(nums, collation={"locale": "en", "numericOrdering": True}).sort("x", 1)) == ["2", "10"]
    assert xs(coll.find(nums).sort("x", 1)) == ["10", "2"]
    letters = {"x": {"$in": ["a", "A"]}}
    assert xs(coll.find(letters, collation={"locale": "en", "caseFirst": "upper"}).sort("x", 1)) == ["A", "a"]
    assert xs(coll.find(letters, collation={"locale": "en"}).sort("x", 1)) == ["a", "A"]
    assert xs(coll.find(letters).sort("x", 1)) == ["A", "a"]  # bytes


def test_alternate_shifted_ignores_punctuation(coll):
    shifted = {"locale": "en", "alternate": "shifted"}
    assert sorted(xs(coll.find({"x": "blackbird"}, collation=shifted))) == ["black-bird", "blackbird"]
    assert xs(coll.find({"x": "blackbird"}, collation={"locale": "en"})) == ["blackbird"]


def test_group_keys_and_distinct_fold_equal_strings(coll):
    out = list(coll.aggregate([{"$match": {"x": {"$in": ["ping", "pong", "cafe"]}}},
                               {"$group": {"_id": "$x", "n": {"$sum": 1}}}], collation=EN2))
    counts = {d["_id"].lower(): d["n"] for d in out}
    assert counts == {"ping": 3, "pong": 1, "cafe": 2}
    assert {d["_id"] for d in out} <= {"ping", "PING", "Ping", "pong", "cafe", "Cafe"}
    ps = {"x": {"$regex": "^p", "$options": "i"}}
    values = coll.distinct("x", ps, collation=EN2)
    assert sorted(v.lower() for v in values) == ["ping", "pong"]
    assert sorted(coll.distinct("x", ps)) == ["PING", "Ping", "ping", "pong"]  # simple: every spelling


def test_regex_and_field_names_are_not_collated(coll):
    assert xs(coll.find({"x": {"$regex": "^PING$"}}, collation=EN2)) == ["PING"]
    assert xs(coll.find({"X": "ping"}, collation=EN2)) == []


def test_simple_is_binary(coll):
    assert xs(coll.find({"x": "PING"}, collation={"locale": "simple"})) == ["PING"]


@pytest.mark.parametrize("bad", [{"locale": "en", "strength": 6}, {"locale": "en", "caseFirst": "UPPER"},
                                 {"locale": "xx_nonsense"}, {"locale": "simple", "strength": 2},
                                 {"locale": "en", "backwards": 1}])
def test_an_invalid_collation_gets_the_servers_code(coll, bad):
    with pytest.raises(OperationFailure) as e:
        list(coll.find({"x": "ping"}, collation=bad))
    assert e.value.code == 2, e.value


def test_plain_fields_still_go_to_the_server(via):
    # nothing encrypted is compared: the server answers, under the collation it implements
    assert sorted(d["_id"] for d in via.det.find({"n": 1}, collation=EN2)) == [1, 3, 5, 7, 9, 11, 13]


def test_the_backend_is_no_oracle(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    try:
        t = c.plain_twins.collation
        t.drop()
        t.insert_many([{"x": x} for x in XS])
        answered = sorted(map(str, xs(t.find({"x": "PING"}, collation=EN2))))
        # MongoDB answers ["PING", "Ping", "ping"]; the embedded backend does not
        assert answered != ["PING", "Ping", "ping"], answered
    finally:
        c.close()


def test_a_write_comparing_an_encrypted_field_under_a_collation_is_refused(coll):
    # the server would match the envelope's bytes, the proxy does not carry out collated writes
    for write in (lambda: coll.update_many({"x": "PING"}, {"$set": {"n": 7}}, collation=EN2),
                  lambda: coll.delete_one({"x": "PING"}, collation=EN2),
                  lambda: coll.find_one_and_update({"x": "PING"}, {"$set": {"n": 7}}, collation=EN2)):
        with pytest.raises(OperationFailure) as e:
            write()
        assert e.value.code == 9720010, e.value
    assert coll.count_documents({"n": 7}) == 0
    assert coll.update_many({"_id": -1}, {"$set": {"n": 7}}, collation=EN2).matched_count == 0  # plain: the server's
