"""What the proxy refuses to decrypt (issue 12), probed as an attacker would: real PyKMIP keys, the
real proxy, and the embedded backend written directly to plant data.

- An envelope is opened only in a policy field of the namespace it is read from, under that
  collection's key or previousKeys, and (v2) only in the context it was written for.
- Anything else in a policy field fails the read (9720021), unless plaintextReads: allow.
- Every way of naming an encrypted field in an expression is refused (9720010).
- v1 envelopes written before v2 (computed here with `cryptography`, independently of the proxy)
  still read.
"""
import time
import uuid

import bson
import pytest
from bson import Binary
from bson.raw_bson import RawBSONDocument
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pymongo import ASCENDING
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client
from fle_kms import admin
from fle_kms.layout import KmsDir

SSN = "111-11-1111"


def policy(kms, extra=""):
    return (f'  iso.a: {{ key: {kms.keys["AES-256"]}, fields: "*" }}\n'
            f'  iso.b: {{ key: {kms.keys["AES-256"]}, fields: "*" }}\n'
            f'  iso.aria: {{ key: {kms.keys["ARIA-256"]}, fields: "*" }}\n'
            f'  iso.migrating: {{ key: {kms.keys["AES-256"]}, fields: "*", plaintextReads: allow }}\n'
            f'  iso.people:\n'
            f'    key: {kms.keys["ARIA-128"]}\n'
            f'    fields:\n'
            f'      ssn: {{ deterministic: true }}\n'
            f'      salary: {{}}\n'
            f'      address.street: {{}}\n' + extra)


@pytest.fixture(scope="module")
def iso_proxy(workdir, backend, kms):
    p = EncryptingProxy(workdir, backend.port, kms, policy(kms), name="proxy-iso").start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def via(iso_proxy):
    c = client(iso_proxy.uri())
    yield c.iso
    c.close()


@pytest.fixture(scope="module")
def raw(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.iso
    c.close()


@pytest.fixture()
def people(via, raw):
    via.people.drop()
    via.people.insert_many([
        {"_id": 1, "ssn": SSN, "salary": 100, "name": "ann", "address": {"street": "1 Main St", "city": "Oslo"}},
        {"_id": 2, "ssn": "222-22-2222", "salary": 200, "name": "bob", "address": {"street": "2 Side St"}},
    ])
    return via.people


def stored(raw, coll, _id, field):
    return bytes(raw[coll].find_one({"_id": _id})[field])


def fails_decryption(fn, *expect_in_message):
    with pytest.raises(OperationFailure) as e:
        fn()
    assert e.value.code == 9720021, e.value.details
    assert e.value.details["codeName"] == "FleProxyDecryptionFailed"
    for text in expect_in_message:
        assert text in str(e.value), str(e.value)
    return str(e.value)


# ---- decryption only where the policy says -----------------------------------------------------

def test_a_literal_envelope_of_another_key_comes_back_as_stored(via, raw, people):
    via.aria.delete_many({})
    via.aria.insert_one({"_id": 1, "secret": "aria plaintext"})
    env = stored(raw, "aria", 1, "secret")
    for field in ("x", "ssn"):  # a free name, and a policy field's name given a computed value
        out = list(people.aggregate([{"$match": {"_id": 1}}, {"$project": {field: {"$literal": Binary(env, 0)}}}]))
        assert out == [{"_id": 1, field: env}]


def test_an_envelope_in_a_field_outside_the_policy_comes_back_as_stored(via, raw, people):
    env = stored(raw, "people", 1, "ssn")
    raw.people.update_one({"_id": 2}, {"$set": {"notes": Binary(env, 0)}})  # planted behind the proxy
    people.update_one({"_id": 1}, {"$set": {"notes": Binary(env, 0)}})  # or through it
    for doc in people.find().sort("_id", ASCENDING):
        assert doc["notes"] == env and doc["ssn"] in (SSN, "222-22-2222")


def test_envelopes_moved_between_fields_or_collections_fail(via, raw, people):
    salary = stored(raw, "people", 1, "salary")
    raw.people.update_one({"_id": 1}, {"$set": {"ssn": Binary(salary, 0)}})
    msg = fails_decryption(lambda: people.find_one({"_id": 1}), "iso.people", "'ssn'")
    assert SSN not in msg and "100" not in msg

    # the same key, the same field name, another collection
    via.a.delete_many({})
    via.b.delete_many({})
    via.a.insert_one({"_id": 1, "s": "from a"})
    via.b.insert_one({"_id": 1, "s": "from b"})
    raw.b.update_one({"_id": 1}, {"$set": {"s": Binary(stored(raw, "a", 1, "s"), 0)}})
    fails_decryption(lambda: via.b.find_one({"_id": 1}), "iso.b", "'s'")

    # another collection's key, in a policy field
    via.aria.delete_many({})
    via.aria.insert_one({"_id": 1, "ssn": SSN})
    raw.people.update_one({"_id": 2}, {"$set": {"ssn": Binary(stored(raw, "aria", 1, "ssn"), 0)}})
    msg = fails_decryption(lambda: people.find_one({"_id": 2}), "iso.people", "'ssn'", "previousKeys")


def test_swapping_one_field_between_documents_of_a_collection_still_reads(raw, people):
    """The documented limit: _id is not bound (as in MongoDB's client-side encryption)."""
    a, b = stored(raw, "people", 1, "ssn"), stored(raw, "people", 2, "ssn")
    raw.people.update_one({"_id": 1}, {"$set": {"ssn": Binary(b, 0)}})
    raw.people.update_one({"_id": 2}, {"$set": {"ssn": Binary(a, 0)}})
    assert people.find_one({"_id": 1})["ssn"] == "222-22-2222"
    assert people.find_one({"_id": 2})["ssn"] == SSN


@pytest.mark.parametrize("damage", ["format byte 0x82 to 0x80", "truncated", "plaintext"])
def test_anything_but_a_valid_envelope_in_a_policy_field_fails(raw, people, damage):
    env = bytearray(stored(raw, "people", 1, "ssn"))
    if damage == "format byte 0x82 to 0x80":
        env[0] = 0x80
        value = Binary(bytes(env), 0)
    elif damage == "truncated":
        value = Binary(bytes(env[:25]), 0)
    else:
        value = "999-99-9999"
    raw.people.update_one({"_id": 1}, {"$set": {"ssn": value}})
    msg = fails_decryption(lambda: people.find_one({"_id": 1}), "iso.people", "'ssn'")
    assert "999-99-9999" not in msg


def test_plaintext_reads_allow_lets_unmigrated_values_through(via, raw):
    via.migrating.delete_many({})
    raw.migrating.insert_one({"_id": 1, "s": "written before the policy"})
    via.migrating.insert_one({"_id": 2, "s": "through the proxy"})
    assert [d["s"] for d in via.migrating.find().sort("_id", ASCENDING)] == ["written before the policy",
                                                                            "through the proxy"]
    bad = bytearray(stored(raw, "migrating", 2, "s"))
    bad[-1] ^= 1
    raw.migrating.update_one({"_id": 2}, {"$set": {"s": Binary(bytes(bad), 0)}})
    fails_decryption(lambda: via.migrating.find_one({"_id": 2}), "iso.migrating")  # tampering still fails


def test_the_load_warns_about_plaintext_reads(iso_proxy):
    assert "plaintextReads: allow" in iso_proxy.log_text()


def test_copies_a_pipeline_makes_are_decrypted_where_they_land(people):
    out = list(people.aggregate([{"$sort": {"_id": 1}}, {"$project": {"who": "$ssn", "pay": "$salary"}}]))
    assert [(d["who"], d["pay"]) for d in out] == [(SSN, 100), ("222-22-2222", 200)]
    grouped = sorted(people.aggregate([{"$group": {"_id": "$ssn", "pays": {"$push": "$salary"},
                                                   "first": {"$first": "$address"}}}]), key=lambda g: g["_id"])
    assert grouped[0] == {"_id": SSN, "pays": [100], "first": {"street": "1 Main St", "city": "Oslo"}}
    faceted = list(people.aggregate([{"$facet": {"all": [{"$sort": {"_id": 1}}, {"$project": {"ssn": 1}}]}}]))
    assert faceted == [{"all": [{"_id": 1, "ssn": SSN}, {"_id": 2, "ssn": "222-22-2222"}]}]


def test_get_more_batches_keep_the_shape_of_their_aggregate(via, raw, people):
    people.insert_many([{"_id": 10 + i, "ssn": f"s{i}", "salary": i} for i in range(20)])
    out = list(people.aggregate([{"$sort": {"_id": 1}}, {"$project": {"who": "$ssn"}}], batchSize=3))
    assert [d.get("who") for d in out][:2] == [SSN, "222-22-2222"] and len(out) == 22
    # a getMore of a cursor the proxy did not see opened is refused, not guessed
    cursor = raw.command("find", "people", batchSize=1)["cursor"]["id"]
    with pytest.raises(OperationFailure) as e:
        via.command("getMore", cursor, collection="people")
    assert e.value.code == 9720011 and "did not open" in str(e.value)


def test_v1_envelopes_written_before_v2_still_read(kms, via, raw):
    """A v1 AES-256-GCM envelope computed with `cryptography` (docs/envelope-format.md), not by the proxy."""
    d = KmsDir(kms.dir)
    c = admin.connect(d, cert=d.proxy_cert, key=d.proxy_key)
    try:
        key = c.get(admin.resolve(c, kms.keys["AES-256"])).value
    finally:
        c.close()
    value = bson.encode({"v": "legacy v1 value"})[4:-1]  # type byte, name, value
    bson_type, plaintext = value[0], value[3:]
    header = bytes([0x81, 0x01]) + uuid.UUID(kms.keys["AES-256"]).bytes + bytes([bson_type])
    nonce = bytes(range(12))
    envelope = header + nonce + AESGCM(key).encrypt(nonce, plaintext, header)
    via.a.delete_many({})
    raw.a.insert_one({"_id": 1, "s": Binary(envelope, 0)})
    assert via.a.find_one({"_id": 1}) == {"_id": 1, "s": "legacy v1 value"}


# ---- every way of naming an encrypted field in an expression -----------------------------------

EXPRESSIONS = [
    {"$getField": "ssn"},
    {"$getField": {"field": "ssn"}},
    {"$getField": {"field": "ssn", "input": "$$CURRENT"}},
    {"$getField": {"field": "ssn", "input": "$$ROOT"}},
    {"$getField": {"field": {"$literal": "ssn"}, "input": "$$ROOT"}},
    {"$getField": {"field": {"$concat": ["s", "sn"]}}},
    "$$ROOT.ssn",
    "$$CURRENT.ssn",
    {"$let": {"vars": {"doc": "$$ROOT"}, "in": {"$getField": {"field": "name", "input": "$$doc"}}}},
    {"$let": {"vars": {"doc": "$$CURRENT"}, "in": "$$doc.ssn"}},
    {"$setField": {"field": "ssn", "input": "$$ROOT", "value": "x"}},
    {"$setField": {"field": "ssn", "input": {}, "value": SSN}},
    {"$unsetField": {"field": "ssn", "input": "$$ROOT"}},
    {"$unsetField": {"field": "salary", "input": {"a": 1}}},
]


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=[str(i) for i in range(len(EXPRESSIONS))])
def test_every_way_of_naming_an_encrypted_field_is_refused_or_evaluated_on_plaintext(people, expr):
    """Never compared by the server with an envelope: refused (9720010, the value not repeated),
    or, since the proxy evaluates expression operators (issue 41), answered by it on the
    plaintext exactly as the equality it spells."""
    matching = sorted(d["_id"] for d in people.find({"ssn": SSN}, {"_id": 1}))
    everyone = sorted(d["_id"] for d in people.find({}, {"_id": 1}))
    runs = ((lambda: sorted(d["_id"] for d in people.find({"$expr": {"$eq": [expr, SSN]}})), matching),
            (lambda: sorted(d["_id"] for d in people.aggregate([{"$project": {"x": {"$eq": [expr, SSN]}}},
                                                                 {"$match": {"x": True}}])), matching),
            (lambda: sorted(d["_id"] for d in people.aggregate([{"$match": {"$expr": {"$eq": [expr, SSN]}}}])),
             matching))
    for run, expected in runs:
        try:
            got = run()
        except OperationFailure as e:
            assert e.code == 9720010, e.details
            assert SSN not in str(e)
            continue
        assert got == expected, (expr, got, expected, everyone)


@pytest.mark.parametrize("stage", [
    {"$replaceRoot": {"newRoot": "$address"}},
    {"$replaceWith": "$address"},
    {"$replaceWith": {"$mergeObjects": ["$$ROOT", {"x": 1}]}},
])
def test_a_new_root_holding_encrypted_paths_is_refused(people, stage):
    with pytest.raises(OperationFailure) as e:
        list(people.aggregate([stage]))
    assert e.value.code == 9720010, e.value.details


def test_a_new_root_of_plain_values_holds_nothing_to_decrypt(via, raw, people):
    env = stored(raw, "people", 1, "ssn")
    raw.people.update_one({"_id": 1}, {"$set": {"meta": {"ssn": Binary(env, 0)}}})
    assert list(people.aggregate([{"$match": {"_id": 1}}, {"$replaceRoot": {"newRoot": "$meta"}}])) == [{"ssn": env}]


# ---- duplicate names -------------------------------------------------------------------------

def test_a_document_naming_a_field_twice_is_refused(people, raw):
    body = b"".join([b"\x10_id\x00" + (7).to_bytes(4, "little"),
                     b"\x02ssn\x00" + (2).to_bytes(4, "little") + b"a\x00",
                     b"\x02ssn\x00" + (2).to_bytes(4, "little") + b"b\x00"])
    doc = RawBSONDocument((len(body) + 5).to_bytes(4, "little") + body + b"\x00")
    with pytest.raises(OperationFailure) as e:
        people.insert_one(doc)
    assert e.value.code == 9720010 and "'ssn' is given twice" in str(e.value)
    assert raw.people.find_one({"_id": 7}) is None


# ---- reload never lowers protection silently ---------------------------------------------------

def test_a_reload_that_removes_a_collection_is_not_applied(workdir, backend, kms, raw):
    p = EncryptingProxy(workdir, backend.port, kms, policy(kms), name="proxy-iso-reload").start()
    try:
        with client(p.uri()) as c:
            p.mark_log()
            lowered = "\n".join(l for l in policy(kms).splitlines() if not l.startswith("  iso.b:")) + "\n"
            p.write(lowered)
            lines = p.new_log_lines("not applied", timeout=20)
            assert lines and "WARN" in lines[0] and "collection iso.b" in lines[0], p.log_text()[-2000:]
            assert "a restart applies the new file" in lines[0]
            c.iso.b.delete_many({"_id": 99})
            c.iso.b.insert_one({"_id": 99, "s": "still encrypted"})
            assert stored(raw, "b", 99, "s")[0] == 0x82
            assert c.iso.b.find_one({"_id": 99})["s"] == "still encrypted"
    finally:
        p.stop()


def test_a_refused_projection_does_not_echo_its_constants(people):
    with pytest.raises(OperationFailure) as e:
        people.find_one({}, {"ssn": {"$eq": ["$ssn", SSN]}})
    assert e.value.code == 9720010 and "'ssn'" in str(e.value) and SSN not in str(e.value)
    with pytest.raises(OperationFailure) as e:  # a policy field given another field's value
        people.find_one({}, {"ssn": "$name"})
    assert e.value.code == 9720010 and "returns only its own value" in str(e.value)
