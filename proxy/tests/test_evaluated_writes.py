"""Updates and deletes the server cannot evaluate on encrypted fields, carried out by the proxy:
candidates read, matched on plaintext, then each written with a compare-and-swap filter. Answers
and resulting documents are held against a plaintext twin stored directly in the backend."""
import threading

import pytest
from pymongo import DeleteMany, DeleteOne, InsertOne, ReplaceOne, UpdateMany, UpdateOne
from pymongo.errors import BulkWriteError, OperationFailure, WriteError

from conftest import EncryptingProxy, client

SECRET = "qz9"  # a residual constant that must never reach the server


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  enc.w: {{ key: {key}, fields: {{ x: {{}}, tag: {{}}, d: {{ deterministic: true }} }} }}\n"
            f"  enc.counter: {{ key: {key}, fields: {{ x: {{}} }} }}\n"
            f"  enc.bulk: {{ key: {key}, fields: {{ x: {{}} }} }}\n"
            f"  enc.big: {{ key: {key}, fields: {{ x: {{}} }} }}\n"
            f"  enc.tight: {{ key: {key}, fields: {{ x: {{}} }}, maxScanDocuments: 5 }}\n")


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


# Several statements in one command, as drivers send a bulk_write: the MongoDB CRUD spec's
# bulkWrite tests (test/crud/v1/write/bulkWrite.json) whose statements need the proxy, with x
# randomized, held against the spec's outcome and against the same bulk on a plain collection.
SPEC_DATA = [{"_id": 1, "x": 11}, {"_id": 2, "x": 22}]
SPEC_BULKS = {
    "updateOne": ([
        UpdateOne({"_id": 0}, {"$set": {"x": 0}}),
        UpdateOne({"_id": 1}, {"$set": {"x": 11}}),  # the value it holds: not counted modified
        UpdateOne({"_id": 2}, {"$inc": {"x": 1}}),
        UpdateOne({"_id": 3}, {"$set": {"x": 33}}, upsert=True),
    ], True, dict(nMatched=2, nModified=1, nUpserted=1, nInserted=0, nRemoved=0, upserted={3: 3}, errors=[]),
        [{"_id": 1, "x": 11}, {"_id": 2, "x": 23}, {"_id": 3, "x": 33}]),
    "updateMany": ([
        UpdateMany({"x": {"$lt": 11}}, {"$set": {"x": 0}}),
        UpdateMany({"x": {"$lte": 22}}, {"$unset": {"y": 1}}),
        UpdateMany({"x": {"$lte": 22}}, {"$inc": {"x": 1}}),
        UpdateMany({"_id": 3}, {"$set": {"x": 33}}, upsert=True),
    ], True, dict(nMatched=4, nModified=2, nUpserted=1, nInserted=0, nRemoved=0, upserted={3: 3}, errors=[]),
        [{"_id": 1, "x": 12}, {"_id": 2, "x": 23}, {"_id": 3, "x": 33}]),
    "mixed unordered": ([
        ReplaceOne({"_id": 3}, {"_id": 3, "x": 33}, upsert=True),
        DeleteOne({"_id": 1}),
        UpdateOne({"_id": 2}, {"$inc": {"x": 1}}),
    ], False, dict(nMatched=1, nModified=1, nUpserted=1, nInserted=0, nRemoved=1, upserted={0: 3}, errors=[]),
        [{"_id": 2, "x": 23}, {"_id": 3, "x": 33}]),
    "mixed ordered": ([
        InsertOne({"_id": 3, "x": 33}),
        UpdateOne({"_id": 2}, {"$inc": {"x": 1}}),
        UpdateMany({"_id": {"$gt": 1}}, {"$inc": {"x": 1}}),
        InsertOne({"_id": 4, "x": 44}),
        DeleteMany({"x": {"$nin": [24, 34]}}),
        ReplaceOne({"_id": 4}, {"_id": 4, "x": 44}, upsert=True),
    ], True, dict(nMatched=3, nModified=3, nUpserted=1, nInserted=2, nRemoved=2, upserted={5: 4}, errors=[]),
        [{"_id": 2, "x": 24}, {"_id": 3, "x": 34}, {"_id": 4, "x": 44}]),
    "deleteMany": ([
        DeleteMany({"x": {"$lt": 11}}),
        DeleteMany({"x": {"$lte": 22}}),
    ], True, dict(nMatched=0, nModified=0, nUpserted=0, nInserted=0, nRemoved=2, upserted={}, errors=[]), []),
}


def bulk_twins_of(enc, backend, data, unique=None):
    via = client(enc.uri()).enc
    plain = client(f"mongodb://127.0.0.1:{backend.port}").plain_write_twins
    for coll in (via.bulk, plain.bulk):
        coll.drop()
        if unique:
            coll.create_index(unique, unique=True)
        coll.insert_many(data)
    return via.bulk, plain.bulk


def outcome(coll, requests, ordered):
    """A bulk_write's counts, upserts by index and write errors as (index, code)."""
    try:
        r = coll.bulk_write(requests, ordered=ordered)
        d = dict(r.bulk_api_result)
    except BulkWriteError as e:
        d = e.details
    out = {k: d[k] for k in ("nMatched", "nModified", "nUpserted", "nInserted", "nRemoved")}
    out["upserted"] = {u["index"]: u["_id"] for u in d["upserted"]}
    out["errors"] = [(w["index"], w["code"]) for w in d["writeErrors"]]
    return out


@pytest.mark.parametrize("name", list(SPEC_BULKS))
def test_spec_bulk_writes_give_the_spec_outcome_with_x_encrypted(enc, backend, relay, name):
    requests, ordered, want, data = SPEC_BULKS[name]
    via, plain = bulk_twins_of(enc, backend, SPEC_DATA)
    relay.clear()
    assert outcome(via, requests, ordered) == want
    assert docs(via) == data
    assert b"$inc" not in relay.captured() and b"$lt" not in relay.captured()  # computed and matched by the proxy
    assert outcome(plain, requests, ordered) == want and docs(plain) == data  # the backend's own answer agrees
    via.database.client.close()
    plain.database.client.close()


# Statements the proxy carries out mixed with the server's, with an error in the middle: a
# duplicate key the server finds (a unique index on plain u; an insert of an existing _id), and a
# write error met by one of the proxy's own writes ($inc of a string).
ERROR_DATA = [{"_id": i, "x": i * 11, "u": f"u{i}", "s": "text"} for i in range(1, 6)]
ERROR_BULKS = {
    "server error": [
        UpdateOne({"_id": 1}, {"$inc": {"x": 1}}),                        # the proxy's
        UpdateOne({"_id": 2}, {"$set": {"u": "u3"}}),                     # the server's: duplicate key
        UpdateMany({"x": {"$lt": 40}}, {"$inc": {"x": 100}}),             # the proxy's
        InsertOne({"_id": 3, "x": 0}),                                    # duplicate _id
        DeleteOne({"x": {"$gt": 140}}),                                   # the proxy's
        UpdateOne({"_id": 9, "x": {"$gt": 0}}, {"$set": {"u": "u9"}}, upsert=True),  # the proxy's upsert
        UpdateOne({"_id": 5}, {"$set": {"y": 1}}),                        # the server's
        DeleteMany({"_id": {"$gte": 5}, "x": {"$lt": 0}}),                # the proxy's, matching none
    ],
    "proxy error": [
        UpdateOne({"_id": 1}, {"$set": {"y": 1}}),                        # the server's
        UpdateMany({"_id": 2, "x": {"$gte": 0}}, {"$inc": {"s": 1}}),     # the proxy's write fails: code 14
        UpdateMany({"x": {"$gte": 30}}, {"$inc": {"x": 1}}),              # the proxy's
        UpdateOne({"_id": 4}, {"$set": {"y": 4}}),                        # the server's
        UpdateOne({"_id": 5, "x": {"$gt": 1}}, {"$inc": {"u": 1}}),       # the proxy's write fails again
        UpdateOne({"_id": 5}, {"$set": {"y": 5}}),                        # the server's
    ],
}


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("name", list(ERROR_BULKS))
def test_mixed_bulk_writes_stop_or_go_on_at_an_error_as_the_server_does(enc, backend, relay, name, ordered):
    via, plain = bulk_twins_of(enc, backend, ERROR_DATA, unique="u")
    requests = ERROR_BULKS[name]
    relay.clear()
    got = outcome(via, requests, ordered)
    # MongoDB stops an ordered command at its first write error; the embedded backend goes on
    # within the command, so the plain reference of an ordered bulk is the bulk up to that error
    want = outcome(plain, requests[:2] if ordered else requests, ordered)
    assert got == want
    assert docs(via) == docs(plain)
    sent = relay.captured()  # the conditions on x stayed with the proxy
    assert b"$lt\x00" not in sent and b"$gt\x00" not in sent
    assert name == "server error" or b"$gte\x00" not in sent  # (there, an _id condition has one)
    if ordered:  # stops at the first error: its index is the client's, nothing after it applied
        assert got["errors"] == [(1, 11000 if name == "server error" else 14)]
    else:
        assert [i for i, _ in got["errors"]] == ([1, 3] if name == "server error" else [1, 4])
    via.database.client.close()
    plain.database.client.close()


@pytest.mark.parametrize("ordered", [True, False])
def test_the_servers_statements_among_the_proxys_go_sealed(twins, relay, ordered):
    """The statements the server runs in a command the proxy carries out are rewritten as any
    statement is: encrypted values sealed, deterministic equalities made envelopes."""
    via, plain = twins
    requests = [
        UpdateOne({"_id": 1}, {"$inc": {"x": 1}}),
        UpdateOne({"_id": 100, "d": 3}, {"$setOnInsert": {"tag": SECRET + "-ins"}}, upsert=True),
        UpdateMany({"d": 3}, {"$set": {"seen": True}}),
        DeleteMany({"d": 2, "n": 2}),
        DeleteOne({"tag": {"$regex": "^" + SECRET}}),
    ]
    relay.clear()
    assert outcome(via, requests, ordered) == outcome(plain, requests, ordered)
    assert docs(via) == docs(plain)
    assert SECRET.encode() not in relay.captured()


def test_a_command_with_a_statement_the_proxy_cannot_carry_out_is_refused_whole(enc, backend):
    via, _ = bulk_twins_of(enc, backend, SPEC_DATA)
    with pytest.raises(OperationFailure) as e:
        via.bulk_write([
            InsertOne({"_id": 20, "x": 1}),
            UpdateOne({"_id": 2}, {"$set": {"y": 1}}),
            UpdateOne({"x": {"$gt": 1}}, {"$inc": {"x": 1}, "$set": {"arr.$[e]": 0}}, array_filters=[{"e": 5}]),
        ])
    assert e.value.code == 9720010, e.value.details
    assert docs(via) == SPEC_DATA + [{"_id": 20, "x": 1}]  # the insert before it ran; nothing of the update command
    via.database.client.close()


def test_a_set_the_proxy_would_carry_out_for_its_count_runs_on_the_server_past_the_budget(enc):
    """In a command the proxy carries out, a $set of x the server could run is the proxy's, for a
    count of modified documents as on plaintext; with more candidates than the budget (5 here)
    the server runs it after all, and counts every document whose x it sealed again modified."""
    via = client(enc.uri()).enc
    via.tight.drop()
    via.tight.insert_many([{"_id": i, "x": i} for i in range(10)])
    r = via.tight.bulk_write([UpdateOne({"_id": 1}, {"$inc": {"x": 1}}), UpdateMany({}, {"$set": {"x": 7}}),
                              UpdateOne({"_id": 2}, {"$set": {"x": 7}})])
    assert (r.matched_count, r.modified_count) == (12, 11)  # the last: 7 already, read by the proxy
    assert [d["x"] for d in docs(via.tight)] == [7] * 10
    via.client.close()


@pytest.mark.parametrize("ordered", [True, False])
def test_a_statement_over_the_budget_among_others_is_its_write_error(enc, ordered):
    """Nothing of that statement is written; the statements before it are, and reported; an
    ordered command stops there, an unordered one goes on."""
    via = client(enc.uri()).enc
    via.tight.drop()
    via.tight.insert_many([{"_id": i, "x": i} for i in range(10)])
    with pytest.raises(BulkWriteError) as e:
        via.tight.bulk_write([UpdateOne({"_id": 1}, {"$set": {"y": 1}}),
                              UpdateMany({"x": {"$gte": 0}}, {"$inc": {"x": 1}}),
                              UpdateOne({"_id": 2}, {"$set": {"y": 2}})], ordered=ordered)
    d = e.value.details
    assert [(w["index"], w["code"]) for w in d["writeErrors"]] == [(1, 9720012)]
    assert (d["nMatched"], d["nModified"]) == ((1, 1) if ordered else (2, 2))
    assert [d.get("y") for d in docs(via.tight)][:3] == ([None, 1, None] if ordered else [None, 1, 2])
    assert [d["x"] for d in docs(via.tight)] == list(range(10))  # nothing of the refused statement
    via.client.close()


def test_candidates_are_read_in_batches_within_16_mib_and_past_the_budget_refused(enc, relay):
    """10,001 documents of 5 KB are 50 MB: read in one batch they would be one reply over the wire
    limit. Read in batches, they are 10,001 candidates, over the budget of 10,000."""
    via = client(enc.uri()).enc
    via.big.drop()
    pad = "p" * 5000
    via.big.insert_many({"_id": i, "g": i % 2, "x": i, "pad": pad} for i in range(10_001))
    relay.clear()
    with pytest.raises(OperationFailure) as e:
        via.big.update_many({"x": {"$gte": 0}}, {"$inc": {"n": 1}})
    assert e.value.code == 9720012 and "maxScanDocuments" in str(e.value)
    assert relay.captured().count(b"getMore") >= 3
    assert via.big.count_documents({"n": {"$exists": True}}) == 0  # nothing of the statement written
    assert via.big.find_one({"_id": 7})["x"] == 7  # the connection goes on

    relay.clear()
    r = via.big.update_many({"g": 1, "x": {"$gte": 9_990}}, {"$inc": {"x": 1_000}})  # 5,000 candidates
    assert (r.matched_count, r.modified_count) == (5, 5)
    assert relay.captured().count(b"getMore") >= 2
    assert sorted(d["x"] for d in via.big.find({"g": 1, "x": {"$gte": 9_990}})) == [10_991, 10_993, 10_995,
                                                                                  10_997, 10_999]
    via.big.drop()
    via.client.close()


# ---- hint: the statement's hint goes with its candidates' read ---------------------------------

@pytest.fixture(scope="module")
def hint_server(backend):
    """mongod's checking of hints (hint_server.py), which the embedded backend does not have."""
    from hint_server import HintServer
    s = HintServer(backend.port)
    yield s
    s.close()


@pytest.fixture(scope="module")
def hinted(workdir, hint_server, kms):
    p = EncryptingProxy(workdir, hint_server.port, kms, policy(kms), name="proxy-hints").start()
    yield p
    p.stop()


@pytest.fixture()
def hint_twins(hinted, hint_server):
    """enc.w through the proxy and its plaintext twin, both behind the hint-checking stand-in, with
    an index on the encrypted x and one on n and x."""
    via = client(hinted.uri()).enc
    plain = client(f"mongodb://127.0.0.1:{hint_server.port}").plain_write_twins
    data = [{"_id": i, "n": i % 3, "x": i, "tag": f"t{i}" if i % 2 else f"{SECRET}{i}", "d": i % 4} for i in range(12)]
    for coll in (via.w, plain.w):
        coll.drop()
        coll.insert_many(data)
        coll.create_index([("x", 1)], name="x_1")
        coll.create_index([("n", 1), ("x", -1)], name="n_1_x_-1")
    hint_server.clear()
    yield via.w, plain.w
    via.client.close()
    plain.client.close()


def _after():
    from pymongo import ReturnDocument
    return ReturnDocument.AFTER


HINTED = {  # each needs the proxy: $inc of the randomized x, a range or a regex on an encrypted field
    "updateOne": lambda c, h: c.update_one({"x": {"$gt": 5}}, {"$inc": {"x": 1}}, hint=h).raw_result,
    "updateMany": lambda c, h: c.update_many({"x": {"$gt": 5}}, {"$inc": {"x": 1}}, hint=h).raw_result,
    "replaceOne": lambda c, h: c.replace_one({"x": {"$lt": 3}, "n": 1}, {"r": 1}, hint=h).raw_result,
    "upsert": lambda c, h: c.update_one({"_id": 40, "x": {"$gt": 100}}, {"$inc": {"x": 1}}, upsert=True,
                                        hint=h).raw_result,
    "bulk": lambda c, h: c.bulk_write([UpdateOne({"x": {"$gt": 9}}, {"$inc": {"x": 1}}, hint=h),
                                       UpdateMany({"x": {"$lt": 4}}, {"$mul": {"x": 2}}, hint=h),
                                       DeleteOne({"x": {"$gte": 7}}, hint=h),
                                       DeleteMany({"tag": {"$regex": "^t"}, "n": 0}, hint=h)]).bulk_api_result,
    "findOneAndUpdate": lambda c, h: c.find_one_and_update({"x": {"$gt": 5}}, {"$inc": {"x": 1}}, hint=h,
                                                           return_document=_after()),
    "findOneAndReplace": lambda c, h: c.find_one_and_replace({"x": {"$gte": 4}}, {"r": 2}, hint=h),
    "findOneAndDelete": lambda c, h: c.find_one_and_delete({"x": {"$lt": 4}}, sort=[("x", -1)], hint=h),
    "deleteOne": lambda c, h: c.delete_one({"x": {"$lt": 4}}, hint=h).raw_result,
    "deleteMany": lambda c, h: c.delete_many({"tag": {"$regex": "^t"}}, hint=h).raw_result,
}


@pytest.mark.parametrize("hint", ["x_1", {"x": 1}, "n_1_x_-1", {"n": 1, "x": -1}, {"$natural": 1}])
@pytest.mark.parametrize("op", list(HINTED))
def test_writes_with_a_hint_answer_and_write_as_the_server_does(hint_twins, hint_server, op, hint):
    """An index name or key pattern, on the encrypted x too (an index key is a name): the
    candidates' find carries it, the proxy's writes by _id do not."""
    via, plain = hint_twins
    got = HINTED[op](via, hint)
    finds = [f for f in hint_server.finds if f["find"] == "w"]
    assert finds and all(f.get("hint") == hint for f in finds), finds
    assert not any("hint" in st for _, st in hint_server.statements)
    assert got == HINTED[op](plain, hint)
    assert docs(via) == docs(plain)


def _error(call):
    """The error a call fails with: its kind, code, and for a write error its index and message."""
    with pytest.raises(OperationFailure) as e:
        call()
    d = e.value.details or {}
    return type(e.value).__name__, e.value.code, d.get("index"), d.get("errmsg")


@pytest.mark.parametrize("hint", ["nope_1", {"nope": 1}, {"x": -1}])
@pytest.mark.parametrize("op", ["updateOne", "updateMany", "replaceOne", "upsert", "findOneAndUpdate",
                                "findOneAndReplace", "findOneAndDelete", "deleteOne", "deleteMany"])
def test_a_hint_naming_no_index_fails_as_the_server_fails_it(hint_twins, op, hint):
    """A write error (2, BadValue) for an update or delete statement, the command's error for a
    findAndModify: as mongod answers the write itself, nothing written."""
    via, plain = hint_twins
    before = docs(via)
    got, want = _error(lambda: HINTED[op](via, hint)), _error(lambda: HINTED[op](plain, hint))
    assert got == want and got[1] == 2, (got, want)
    assert got[0] == ("OperationFailure" if op.startswith("findOne") else "WriteError")
    assert docs(via) == docs(plain) == before


@pytest.mark.parametrize("ordered", [True, False])
def test_a_bulk_statement_with_a_hint_naming_no_index_is_its_write_error(hint_twins, ordered):
    via, plain = hint_twins
    requests = [UpdateOne({"x": {"$gt": 9}}, {"$inc": {"x": 1}}, hint="x_1"),
                UpdateMany({"x": {"$lt": 4}}, {"$mul": {"x": 2}}, hint="nope_1"),
                DeleteOne({"x": {"$gte": 7}}, hint={"x": 1}),
                UpdateOne({"_id": 3}, {"$set": {"plain": 1}}, hint="_id_")]  # the server's own statement
    got, want = outcome(via, requests, ordered), outcome(plain, requests, ordered)
    assert got == want and got["errors"] == [(1, 2)], (got, want)
    assert docs(via) == docs(plain)
