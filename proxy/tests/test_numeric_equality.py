"""Equality on a deterministic field matches every numeric form of the value, as MongoDB compares
numbers: int32 1, int64 1, double 1.0 and decimal 1, 1.0, 1.00 are one value
(docs/query-model.md, "Numbers on deterministic fields"). pymongo through the real proxy (PyKMIP
keys over mutual TLS, the embedded backend); every answer is held against the same query on a
plaintext twin in the backend, where the backend compares as MongoDB does, and against MongoDB's
answer written out where it does not."""
import signal

import pytest
from bson import Decimal128, Int64
from bson.raw_bson import RawBSONDocument
from pymongo import ASCENDING

from conftest import EncryptingProxy, client

STORED = [1, 1.0, Int64(1), Decimal128("1"), Decimal128("1.00"), 2.5, Decimal128("2.5"), Decimal128("2.50"),
          2, Int64(2), 2.0, 7, "1", "2.5", -3, Decimal128("-3.0"), 1 << 40, float(1 << 40), 0.1,
          Decimal128("0.1"), True, None]
QUERIED = [1, 1.0, Int64(1), Decimal128("1"), Decimal128("1.0000"), 2.5, Decimal128("2.5"), Decimal128("2.500"),
           2, Int64(2), 2.0, Decimal128("2"), 7.0, Int64(7), -3.0, Decimal128("-3"), Int64(1 << 40),
           Decimal128("1099511627776.0"), "1", 3, 0.5]
# not 0.1 nor the decimal 0.1: the backend takes them as equal, MongoDB compares a double and a
# decimal exactly (the double 0.1 is 0.1000000000000000055…), and so does the proxy: below

BSON_TYPES = {int: 0x10, float: 0x01, Int64: 0x12, Decimal128: 0x13}


def shapes(q):
    return [
        {"x": q},
        {"x": {"$eq": q}},
        {"x": {"$ne": q}},
        {"x": {"$in": [q, "2.5"]}},
        {"x": {"$nin": [q, 7]}},
        {"x": {"$eq": q, "$in": [1, 2.5, 2, q]}},
        {"x": {"$ne": q, "$nin": [2]}},
        {"$or": [{"x": q}, {"x": "1"}]},
        {"$nor": [{"x": q}]},
        {"x": {"$in": [q]}, "_id": {"$lt": 15}},
    ]


@pytest.fixture(scope="module")
def twins(workdir, backend, kms):
    key = kms.keys["AES-256"]
    policy = f"  enc.nums: {{ key: {key}, fields: {{ x: {{ deterministic: true }} }} }}\n"
    proxy = EncryptingProxy(workdir, backend.port, kms, policy, name="proxy-numbers").start()
    via, direct = client(proxy.uri()), client(f"mongodb://127.0.0.1:{backend.port}")
    docs = [{"_id": i, "x": v} for i, v in enumerate(STORED)] + [{"_id": len(STORED), "other": 1}]
    via.enc.nums.drop()
    direct.plain_twins.nums.drop()
    via.enc.nums.insert_many(docs)
    direct.plain_twins.nums.insert_many(docs)
    yield via.enc.nums, direct.plain_twins.nums, direct.enc.nums
    via.close()
    direct.close()
    proxy.stop()


def ids(coll, flt):
    return [d["_id"] for d in coll.find(flt).sort("_id", ASCENDING)]


@pytest.mark.parametrize("q", QUERIED, ids=repr)
def test_equality_on_a_deterministic_field_finds_every_numeric_form(twins, q):
    enc, plain, _ = twins
    for flt in shapes(q):
        want = ids(plain, flt)
        assert ids(enc, flt) == want, flt
        assert enc.count_documents(flt) == len(want), flt


def test_the_forms_mongodb_counts_equal_are_found(twins):
    enc, _, _ = twins
    assert ids(enc, {"x": Decimal128("1.0")}) == [0, 1, 2, 3, 4]
    assert ids(enc, {"x": 2.5}) == [5, 6, 7]
    assert ids(enc, {"x": Int64(2)}) == [8, 9, 10]
    assert ids(enc, {"x": 0.1}) == [18], "the double 0.1 is no decimal 0.1 (MongoDB compares them exactly)"
    assert ids(enc, {"x": Decimal128("0.1")}) == [19]
    assert ids(enc, {"x": {"$nin": [0.1, Decimal128("-3"), 1]}}) == [5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 19, 20,
                                                                        21, 22]
    assert ids(enc, {"x": True}) == [20], "a boolean is no number"


def test_stored_values_keep_their_own_type(twins):
    """The query asks for every form; what is stored is each value's own envelope, as before."""
    _, _, raw = twins
    for d in raw.with_options(codec_options=raw.codec_options.with_options(document_class=RawBSONDocument)).find(
            {"_id": {"$lt": 8}}).sort("_id", ASCENDING):
        envelope = bytes(d["x"])
        assert envelope[0] == 0x82
        assert envelope[18] == BSON_TYPES[type(STORED[d["_id"]])], d["_id"]


def test_an_upsert_by_a_number_inserts_the_field(twins):
    enc, plain, _ = twins
    for coll in (enc, plain):
        coll.delete_many({"tag": "u"})
        r = coll.update_one({"x": Decimal128("42.0"), "tag": "u"}, {"$set": {"n": 1}}, upsert=True)
        assert r.upserted_id is not None
        again = coll.update_one({"x": 42, "tag": "u"}, {"$inc": {"n": 1}}, upsert=True)
        assert (again.matched_count, again.upserted_id) == (1, None), "42 finds the decimal 42.0 it inserted"
    got = enc.find_one({"tag": "u"}, {"_id": 0})
    assert got == plain.find_one({"tag": "u"}, {"_id": 0}) == {"x": Decimal128("42.0"), "tag": "u", "n": 2}
    for coll in (enc, plain):
        coll.delete_many({"tag": "u"})


def test_nan_equals_nan_and_negative_zero_equals_zero(twins):
    """MongoDB's answers, written out: the backend's own comparison of NaN and -0.0 is not MongoDB's."""
    enc, _, _ = twins
    extra = [{"_id": 100, "x": float("nan")}, {"_id": 101, "x": Decimal128("NaN")}, {"_id": 102, "x": -0.0},
             {"_id": 103, "x": 0}, {"_id": 104, "x": Decimal128("-0.00")}, {"_id": 105, "x": Int64(0)},
             {"_id": 106, "x": float("inf")}, {"_id": 107, "x": Decimal128("Infinity")}]
    enc.insert_many(extra)
    try:
        big = {"_id": {"$gte": 100}}
        for nan in (float("nan"), Decimal128("NaN"), Decimal128("-NaN")):
            assert ids(enc, {"x": nan, **big}) == [100, 101]
        for zero in (0, -0.0, 0.0, Int64(0), Decimal128("0"), Decimal128("-0"), Decimal128("0.000")):
            assert ids(enc, {"x": zero, **big}) == [102, 103, 104, 105]
            assert ids(enc, {"x": {"$ne": zero}, **big}) == [100, 101, 106, 107]
        assert ids(enc, {"x": {"$in": [float("inf")]}, **big}) == [106, 107]
    finally:
        enc.delete_many({"_id": {"$gte": 100}})


def test_during_a_key_change_every_form_is_asked_for_under_every_key(workdir, backend, kms):
    """enc.numrot moves from AES-256 to ARIA-256 (previousKeys): a number stored under either key,
    in any type, is found; an upsert the server carries out inserts the field its filter names
    (before, an $in of the value's envelopes under both keys started nothing)."""
    old, new = kms.keys["AES-256"], kms.keys["ARIA-256"]
    fields = "fields: { x: { deterministic: true } }"
    p = EncryptingProxy(workdir, backend.port, kms, f"  enc.numrot: {{ key: {old}, {fields} }}\n",
                        name="proxy-numbers-rotating").start()
    try:
        with client(p.uri()) as c:
            rot = c.enc.numrot
            rot.drop()
            rot.insert_many([{"_id": 1, "x": 5}, {"_id": 2, "x": Decimal128("5.0")}, {"_id": 3, "x": "5"}])
            p.mark_log()
            p.write(f"  enc.numrot: {{ key: {new}, previousKeys: [{old}], {fields} }}\n")
            p.proc.send_signal(signal.SIGHUP)
            assert p.new_log_lines("policy reloaded", timeout=20), p.log_text()[-2000:]
            rot.insert_many([{"_id": 4, "x": Int64(5)}, {"_id": 5, "x": 5.0}, {"_id": 6, "x": 6}])
            assert ids(rot, {"x": 5.0}) == [1, 2, 4, 5]
            assert ids(rot, {"x": {"$eq": Decimal128("5"), "$in": [5, 6]}}) == [1, 2, 4, 5]
            assert ids(rot, {"x": {"$ne": Int64(5), "$nin": ["5"]}}) == [6]
            rot.update_one({"x": "7", "tag": "u"}, {"$set": {"n": 1}}, upsert=True)
            rot.update_one({"x": 8.0, "tag": "u"}, {"$set": {"n": 1}}, upsert=True)
            assert sorted(((d["x"], d["n"]) for d in rot.find({"tag": "u"})), key=repr) == [("7", 1), (8.0, 1)]
            assert rot.count_documents({"x": {"$in": [8, "7"]}, "tag": "u"}) == 2
            rot.drop()
    finally:
        p.stop()
