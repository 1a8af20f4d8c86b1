"""Updates and deletes the server cannot evaluate on encrypted fields, carried out by the proxy:
candidates read, matched on plaintext, then each written with a compare-and-swap filter. Answers
and resulting documents are held against a plaintext twin stored directly in the backend."""
import threading

import pytest
from pymongo.errors import BulkWriteError, OperationFailure, WriteError

from conftest import EncryptingProxy, client

SECRET = "qz9"  # a residual constant that must never reach the server


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  enc.w: {{ key: {key}, fields: {{ x: {{}}, tag: {{}}, d: {{ deterministic: true }} }} }}\n"
            f"  enc.counter: {{ key: {key}, fields: {{ x: {{}} }} }}\n")


@pytest.fixture(scope="module")
def enc(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-writes").start()
    yield p
    p.stop()


@pytest.fixture()
def twins(enc, backend):
    via = client(enc.uri()).enc
    plain = client(f"mongodb://127.0.0.1:{backend.port}").plain_write_twins
    docs = [{"_id": i, "n": i % 3, "x": i, "tag": f"t{i}" if i % 2 else f"{SECRET}{i}", "d": i % 4} for i in range(12)]
    for coll in (via.w, plain.w):
        coll.drop()
        coll.insert_many(docs)
    yield via.w, plain.w
    via.client.close()
    plain.client.close()


def docs(coll):
    return list(coll.find({}, sort=[("_id", 1)]))


@pytest.mark.parametrize("flt,update,many", [
    ({"x": {"$gt": 5}}, {"$set": {"name": "big"}}, True),
    ({"x": {"$gt": 5}}, {"$set": {"name": "big"}}, False),
    ({"n": 1, "tag": {"$regex": "^t"}}, {"$set": {"tag": "changed", "flag": True}}, True),
    ({"d": {"$in": [1, 2]}, "x": {"$lt": 8}}, {"$inc": {"x": 10, "n": 1}}, True),
    ({}, {"$mul": {"x": 2}}, True),
    ({"x": {"$gte": 3}}, {"$min": {"x": 4}}, True),
    ({"x": {"$lte": 3}}, {"$max": {"x": 2.5}}, True),
    ({"_id": 4}, {"$inc": {"missing": 5, "x": -1}}, False),
    ({"d": {"$ne": None}, "n": 0}, {"$inc": {"d": 1}}, True),  # a deterministic field
    ({"tag": {"$regex": "^t1"}}, {"replaced": True, "x": 1}, False),  # a replacement
])
def test_updates_answer_and_write_as_the_server_does_on_plaintext(twins, flt, update, many):
    via, plain = twins
    op = ("update_many" if many else "update_one") if next(iter(update)).startswith("$") else "replace_one"
    got, want = getattr(via, op)(flt, update), getattr(plain, op)(flt, update)
    assert (got.matched_count, got.modified_count) == (want.matched_count, want.modified_count)
    assert docs(via) == docs(plain)


@pytest.mark.parametrize("flt,many", [({"x": {"$lt": 4}}, True), ({"tag": {"$regex": "^t"}}, False),
                                      ({"n": 2, "x": {"$ne": 5}}, True)])
def test_deletes_answer_and_delete_as_the_server_does(twins, flt, many):
    via, plain = twins
    op = "delete_many" if many else "delete_one"
    assert getattr(via, op)(flt).deleted_count == getattr(plain, op)(flt).deleted_count
    assert docs(via) == docs(plain)


def test_no_residual_constant_reaches_the_server(twins, relay):
    via, _ = twins
    relay.clear()
    assert via.update_many({"tag": {"$regex": "^" + SECRET}}, {"$set": {"hit": 1}}).matched_count == 6
    assert via.delete_many({"tag": {"$regex": "^" + SECRET + "1"}}).deleted_count == 1
    sent = relay.captured()
    assert SECRET.encode() not in sent and b"$regex" not in sent


def test_concurrent_increments_are_never_lost(enc):
    via = client(enc.uri(), maxPoolSize=16).enc
    via.counter.drop()
    via.counter.insert_one({"_id": 1, "x": 0})
    errors = []

    def writer():
        c = client(enc.uri()).enc
        try:
            for _ in range(25):
                assert c.counter.update_one({"_id": 1}, {"$inc": {"x": 1}}).modified_count == 1
        except Exception as e:  # surfaced below
            errors.append(e)
        finally:
            c.client.close()

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert via.counter.find_one({"_id": 1})["x"] == 200
    via.client.close()


def test_an_increment_of_a_string_fails_as_the_server_fails_it(twins):
    via, plain = twins
    with pytest.raises(WriteError) as got:
        via.update_one({"_id": 1}, {"$inc": {"tag": 1}})
    with pytest.raises(WriteError) as want:
        plain.update_one({"_id": 1}, {"$inc": {"tag": 1}})
    assert got.value.code == want.value.code == 14
    assert docs(via) == docs(plain)


@pytest.mark.parametrize("call", [
    lambda c: c.update_one({"x": {"$gt": 100}, "a": 1, "a.b": 2}, {"$set": {"c": 1}}, upsert=True),
    lambda c: c.update_many({"x": {"$gt": 1}}, {"$set": {"a": 1}}, array_filters=[{"e.k": 1}]),
])
def test_what_the_proxy_cannot_carry_out_exactly_is_refused_untouched(twins, call):
    via, plain = twins
    before = docs(via)
    with pytest.raises((OperationFailure, BulkWriteError)) as e:
        call(via)
    assert e.value.code in (9720010, 9720011), e.value.details
    assert docs(via) == before


@pytest.mark.parametrize("op,flt,update", [
    ("update_one", {"_id": 50, "x": {"$gt": 100}}, {"$set": {"a": 1}}),  # matches none: inserted
    ("update_one", {"_id": 3, "x": {"$gt": 1}}, {"$set": {"a": 1}}),  # matches: updated, not inserted
    ("update_one", {"_id": 51, "tag": SECRET + "-new", "x": {"$lt": 0}}, {"$inc": {"x": 5}}),
    ("update_many", {"_id": 52, "d": 3, "n": {"$in": [7, 8]}, "x": {"$gt": 1000}}, {"$set": {"y": 1}, "$inc": {"n": 1}}),
    ("update_one", {"$and": [{"_id": 53}, {"x": 5}], "tag": {"$regex": "^zz"}}, {"$inc": {"x": 1}, "$setOnInsert": {"new": True}}),
    ("update_one", {"_id": 54, "x": {"$gt": 100}}, {"$max": {"x": 7}}),
    ("replace_one", {"_id": 55, "x": {"$gt": 100}}, {"r": 1}),
])
def test_upserts_insert_what_the_server_inserts_on_plaintext(twins, relay, op, flt, update):
    via, plain = twins
    relay.clear()
    got, want = getattr(via, op)(flt, update, upsert=True), getattr(plain, op)(flt, update, upsert=True)
    assert (got.matched_count, got.modified_count, got.upserted_id) == \
        (want.matched_count, want.modified_count, want.upserted_id)
    assert docs(via) == docs(plain)
    assert SECRET.encode() not in relay.captured()  # the new document's encrypted fields went sealed


def test_an_upsert_of_an_existing_id_fails_as_the_server_fails_it(twins):
    via, plain = twins
    with pytest.raises(WriteError) as got:
        via.update_one({"_id": 3, "x": {"$gt": 100}}, {"$set": {"a": 1}}, upsert=True)
    with pytest.raises(WriteError) as want:
        plain.update_one({"_id": 3, "x": {"$gt": 100}}, {"$set": {"a": 1}}, upsert=True)
    assert got.value.code == want.value.code == 11000
    assert docs(via) == docs(plain)


@pytest.mark.parametrize("flt,sort,update,after,projection", [
    ({"x": {"$gt": 3}}, [("x", 1)], {"$set": {"picked": True}}, False, None),
    ({}, [("x", -1)], {"$inc": {"x": 100}}, True, None),
    ({"n": 1}, [("tag", 1)], {"$set": {"tag": "first"}}, True, {"tag": 1, "x": 1}),
    ({"tag": {"$regex": "^t"}}, None, {"$mul": {"x": 3}}, False, {"_id": 0, "x": 1}),
    ({"x": {"$gt": 100}}, [("x", 1)], {"$set": {"never": 1}}, True, None),
])
def test_find_one_and_update_answers_and_writes_as_the_server_does(twins, flt, sort, update, after, projection):
    from pymongo import ReturnDocument
    via, plain = twins
    kw = dict(sort=sort, projection=projection,
              return_document=ReturnDocument.AFTER if after else ReturnDocument.BEFORE)
    assert via.find_one_and_update(flt, update, **kw) == plain.find_one_and_update(flt, update, **kw)
    assert docs(via) == docs(plain)


@pytest.mark.parametrize("flt,update,after,projection", [
    ({"_id": 60, "x": {"$gt": 100}, "tag": SECRET + "-f"}, {"$inc": {"x": 2}}, True, None),
    ({"_id": 61, "x": {"$gt": 100}}, {"$set": {"a": 1}}, False, None),
    ({"_id": 62, "x": 9, "n": {"$lt": 0}}, {"$mul": {"x": 3}}, True, {"x": 1}),
    ({"_id": 2, "x": {"$lt": 5}}, {"$set": {"a": 1}}, True, None),  # matches: an update, not an insert
])
def test_find_one_and_update_upserts_as_the_server_does(twins, relay, flt, update, after, projection):
    from pymongo import ReturnDocument
    via, plain = twins
    relay.clear()
    kw = dict(projection=projection, upsert=True,
              return_document=ReturnDocument.AFTER if after else ReturnDocument.BEFORE)
    assert via.find_one_and_update(flt, update, **kw) == plain.find_one_and_update(flt, update, **kw)
    assert docs(via) == docs(plain)
    assert SECRET.encode() not in relay.captured()


@pytest.mark.parametrize("flt,sort", [({"x": {"$lt": 6}}, [("x", -1)]), ({"tag": {"$regex": "^t"}}, None)])
def test_find_one_and_delete_answers_and_deletes_as_the_server_does(twins, flt, sort):
    via, plain = twins
    assert via.find_one_and_delete(flt, sort=sort) == plain.find_one_and_delete(flt, sort=sort)
    assert docs(via) == docs(plain)


def test_concurrent_find_and_modify_increments_are_never_lost(enc):
    via = client(enc.uri()).enc
    via.counter.drop()
    via.counter.insert_one({"_id": 1, "x": 0})
    seen, errors = [], []

    def writer():
        c = client(enc.uri()).enc
        try:
            for _ in range(20):
                seen.append(c.counter.find_one_and_update({"x": {"$gte": 0}}, {"$inc": {"x": 1}})["x"])
        except Exception as e:
            errors.append(e)
        finally:
            c.client.close()

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert via.counter.find_one({"_id": 1})["x"] == 160
    assert sorted(seen) == list(range(160)), "each writer saw its own value before its increment"
    via.client.close()
