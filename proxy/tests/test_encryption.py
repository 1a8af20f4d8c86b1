"""The proxy encrypting for real: PyKMIP keys over mutual TLS, the embedded backend, pymongo.

Reading the backend directly (no proxy) shows what the database holds."""
import datetime
import os
import signal
import time
import uuid

import bson
import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex
from bson.timestamp import Timestamp
from pymongo import ASCENDING, ReturnDocument
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

MARKER = "PLAINTEXT-MARKER-7c1e"

#: collection → (key label in the KMS bootstrap, suite id stored in byte 1 of each envelope)
SUITES = {
    "aes": ("AES-256", 0x01),
    "aria": ("ARIA-256", 0x02),
    "lea": ("LEA-256", 0x03),
    "aes_cbc": ("AES-256", 0x11),
    "aria_cbc": ("ARIA-256", 0x12),
    "seed": ("SEED-128", 0x14),
    "tdes": ("3DES", 0x15),
}
EXPLICIT_SUITE = {"aes_cbc": "AES_CBC_HMAC", "aria_cbc": "ARIA_CBC_HMAC"}


def policy_yaml(kms, people_key="ARIA-128", people_previous_keys=()):
    lines = []
    for coll, (label, _) in SUITES.items():
        suite = f", suite: {EXPLICIT_SUITE[coll]}" if coll in EXPLICIT_SUITE else ""
        lines.append(f'  enc.{coll}: {{ key: {kms.keys[label]}, fields: "*"{suite} }}')
    previous = ""
    if people_previous_keys:
        previous = "\n    previousKeys: [" + ", ".join(kms.keys[k] for k in people_previous_keys) + "]"
    lines.append(f"""  enc.people:
    key: {kms.keys[people_key]}{previous}
    fields:
      ssn: {{ deterministic: true }}
      age: {{ deterministic: true }}
      address.street: {{}}
      phones: {{}}
      items.price: {{}}
      profile: {{}}""")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def enc(workdir, backend, kms):
    p = EncryptingProxy(workdir, backend.port, kms, policy_yaml(kms)).start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def via(enc):
    c = client(enc.uri())
    yield c.enc
    c.close()


@pytest.fixture(scope="module")
def raw(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.enc
    c.close()


def every_type(i):
    return {"_id": i, "s": f"{MARKER} {i} héllo", "i32": -7, "i64": Int64(1 << 40), "dbl": 3.25,
            "dec": Decimal128("1234.5678"), "yes": True, "when": datetime.datetime(2026, 11, 22, 1, 2, 3),
            "none": None, "oid": ObjectId("0123456789abcdef01234567"), "bin": Binary(b"\x00\x01\xff"),
            "uuid": Binary(uuid.UUID(int=i).bytes, 4), "doc": {"a": [1, {"b": MARKER}]}, "arr": [MARKER, 2, 3.5],
            "re": Regex("^a.*z$", "i"), "ts": Timestamp(1_700_000_000, 7), "js": Code("function(){return 1}"),
            "lo": MinKey(), "hi": MaxKey()}


def assert_envelope(value, key_id: str, suite: int):
    assert isinstance(value, bytes), f"stored as {type(value)}"
    assert value[0] == 0x82, "format byte"
    assert value[1] & 0x3F == suite, f"suite {value[1]:#x}"
    assert value[2:18] == uuid.UUID(key_id).bytes, "key id"


@pytest.mark.parametrize("coll", list(SUITES))
def test_crud_round_trips_and_the_database_holds_only_envelopes(via, raw, kms, coll):
    c = via[coll]
    c.drop()
    docs = [every_type(i) for i in range(5)]
    c.insert_many(docs)
    expected = [bson.decode(bson.encode(d)) for d in docs]  # as pymongo decodes them (Binary subtype 0 → bytes)
    assert list(c.find().sort("_id", ASCENDING)) == expected

    label, suite = SUITES[coll]
    for stored in raw[coll].find():
        for k, v in stored.items():
            if k != "_id":
                assert_envelope(v, kms.keys[label], suite)
    raw_bytes = b"".join(raw[coll].find_raw_batches())
    assert MARKER.encode() not in raw_bytes

    c.update_one({"_id": 1}, {"$set": {"s": "changed", "extra": [1, 2]}})
    c.replace_one({"_id": 2}, {"s": "replaced"})
    assert c.find_one({"_id": 1})["s"] == "changed"
    assert c.find_one({"_id": 1})["extra"] == [1, 2]
    assert c.find_one({"_id": 2}) == {"_id": 2, "s": "replaced"}
    assert_envelope(raw[coll].find_one({"_id": 2})["s"], kms.keys[label], suite)
    assert c.delete_one({"_id": 3}).deleted_count == 1
    assert c.count_documents({}) == 4
    assert c.find_one_and_update({"_id": 4}, {"$set": {"s": "x"}}, return_document=ReturnDocument.AFTER)["s"] == "x"


def people():
    return [{"_id": i, "ssn": f"{MARKER}-{i % 3}", "age": 30 + i % 2, "name": f"n{i}",
             "address": {"street": f"{i} Main St", "city": "Seoul"},
             "phones": [f"+82 {i}", f"+1 {i}"],
             "items": [{"sku": "a", "price": 10 + i}, {"sku": "b", "price": Decimal128("2.50")}],
             "profile": {"likes": ["x", MARKER], "score": i}} for i in range(12)]


@pytest.fixture(scope="module")
def populated(via, raw):
    via.people.drop()
    raw.people_plain.drop()
    via.people.insert_many(people())
    raw.people_plain.insert_many(people())
    return via.people


def test_nested_paths_and_arrays_are_encrypted_where_the_policy_says(populated, raw, kms):
    key = kms.keys["ARIA-128"]
    stored = raw.people.find_one({"_id": 4})
    assert stored["name"] == "n4" and stored["address"]["city"] == "Seoul" and stored["items"][0]["sku"] == "a"
    for v in (stored["ssn"], stored["age"], stored["address"]["street"], stored["phones"], stored["profile"],
              stored["items"][0]["price"], stored["items"][1]["price"]):
        assert_envelope(v, key, 0x02)
    assert populated.find_one({"_id": 4}) == people()[4]


@pytest.mark.parametrize("query", [
    {"ssn": f"{MARKER}-1"},
    {"ssn": {"$eq": f"{MARKER}-2"}},
    {"ssn": {"$in": [f"{MARKER}-0", f"{MARKER}-2"]}},
    {"ssn": {"$ne": f"{MARKER}-0"}},
    {"ssn": {"$nin": [f"{MARKER}-0", f"{MARKER}-1"]}},
    {"$or": [{"ssn": f"{MARKER}-1"}, {"age": 31}]},
    {"$and": [{"ssn": f"{MARKER}-1"}, {"age": 31}, {"name": {"$gte": "n2"}}]},
    {"$nor": [{"ssn": f"{MARKER}-1"}]},
    {"ssn": {"$exists": True}, "address.street": {"$exists": True}},
    {"age": {"$in": [31]}, "_id": {"$lt": 9}},
])
def test_deterministic_equality_matches_a_plaintext_twin(populated, raw, query):
    via_proxy = [d["_id"] for d in populated.find(query).sort("_id", ASCENDING)]
    plain = [d["_id"] for d in raw.people_plain.find(query).sort("_id", ASCENDING)]
    assert via_proxy == plain
    assert populated.count_documents(query) == len(plain)


def test_reads_of_every_shape_are_decrypted(populated):
    docs = list(populated.find({}, {"ssn": 1, "address": 1}).sort("_id", ASCENDING).batch_size(5))
    assert [d["ssn"] for d in docs] == [p["ssn"] for p in people()]
    assert sorted(populated.distinct("ssn")) == sorted({p["ssn"] for p in people()})
    assert sorted(populated.distinct("address.street")) == sorted(p["address"]["street"] for p in people())
    agg = list(populated.aggregate([{"$match": {"ssn": f"{MARKER}-0"}}, {"$project": {"who": "$ssn", "phones": 1}},
                                    {"$sort": {"_id": 1}}]))
    assert [a["who"] for a in agg] == [f"{MARKER}-0"] * 4
    assert agg[0]["phones"] == people()[0]["phones"]
    grouped = list(populated.aggregate([{"$group": {"_id": "$ssn", "n": {"$sum": 1}, "ages": {"$push": "$age"}}},
                                        {"$sort": {"n": -1}}]))
    assert sorted(g["_id"] for g in grouped) == sorted({p["ssn"] for p in people()})
    assert sum(g["n"] for g in grouped) == 12


REFUSED = [
    ("find", {"filter": {"$where": "this.age > 3"}}, "$where"),
    ("aggregate", {"pipeline": [{"$out": "copy"}], "cursor": {}}, "$out"),
    ("aggregate", {"pipeline": [{"$lookup": {"from": "aes", "localField": "_id", "foreignField": "_id", "as": "a"}}],
                   "cursor": {}}, "enc.aes"),
    ("explain", None, "explain"),
]

# Refused before the proxy evaluated what the server cannot (issue 28); now answered: the answers
# are held against a plaintext twin in test_evaluated_queries.py.
EVALUATED = [
    # expression operators over encrypted fields, evaluated by the proxy since issue 41
    ("find", {"filter": {"$expr": {"$gt": ["$age", 30]}}}),
    ("aggregate", {"pipeline": [{"$project": {"x": {"$concat": ["$ssn", "!"]}}}], "cursor": {}}),
    ("find", {"filter": {"address.street": "4 Main St"}}),
    ("find", {"filter": {"ssn": {"$regex": "^P"}}}),
    ("find", {"filter": {"age": {"$gt": 30}}}),
    ("find", {"filter": {"ssn": None}}),
    ("find", {"filter": {"profile.score": 3}}),
    ("find", {"filter": {"items": {"price": 11, "sku": "a"}}}),
    ("find", {"filter": {}, "sort": {"ssn": 1}}),
    ("find", {"filter": {}, "projection": {"phones": {"$slice": 1}}}),
    ("count", {"query": {"address.street": {"$exists": False}, "phones": ["a"]}}),
    ("find", {"filter": {"ssn": {"$type": "string"}}}),
    ("find", {"filter": {"phones": {"$size": 2}}}),
    ("find", {"filter": {"phones": {"$elemMatch": {"$eq": "+1 1"}}}}),
    ("find", {"filter": {"items": {"$elemMatch": {"price": 11}}}}),
    ("find", {"filter": {"items.price": {"$type": "int"}}}),
    ("distinct", {"key": "name", "query": {"age": {"$lt": 31}}}),
    ("distinct", {"key": "name", "query": {"phones": "+1 1"}}),
    ("distinct", {"key": "profile.score"}),
    ("aggregate", {"pipeline": [{"$group": {"_id": None, "t": {"$sum": "$age"}}}], "cursor": {}}),
    ("aggregate", {"pipeline": [{"$sort": {"age": 1}}], "cursor": {}}),
    ("aggregate", {"pipeline": [{"$match": {}}, {"$match": {"ssn": "x"}}], "cursor": {}}),
    ("aggregate", {"pipeline": [{"$group": {"_id": "$address.street"}}], "cursor": {}}),
]


@pytest.mark.parametrize("command,args", EVALUATED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(EVALUATED)])
def test_reads_the_server_cannot_evaluate_are_answered_by_the_proxy(populated, command, args):
    assert populated.database.command(command, "people", **args)["ok"] == 1


#: refused filters (and sorts) of commands that write: if one were forwarded, the server would
#: compare ciphertexts — several of these ($type: binData, $ne: null) would then match every document
# (update, delete and findAndModify with such filters or sorts, and $inc/$mul/$min/$max of
# encrypted fields, are carried out by the proxy now: test_evaluated_writes.py)
REFUSED_WRITES = [
    # MongoDB 8.0's updateOne sort chooses the document to update: on ciphertext it would choose wrongly
    ("update", {"updates": [{"q": {}, "u": {"$set": {"name": "sorted"}}, "sort": {"age": 1}}]}, "age"),
]

#: malformed commands on an encrypted collection: the server would reject them, but the proxy
#: refuses them first so that nothing it has not examined is forwarded
MALFORMED = [
    ("find", {"filter": {"$or": {"ssn": f"{MARKER}-1"}}}, "$or"),
    ("delete", {"deletes": [{"q": {"$and": [f"{MARKER}-1"]}, "limit": 0}]}, "$and"),
    ("update", {"updates": [{"q": {}, "u": {"$set": ["ssn", f"{MARKER}-1"]}}]}, "$set"),
    ("update", {"updates": [{"q": {}, "u": {"name": "x", "$set": {"ssn": f"{MARKER}-1"}}}]}, "mixes"),
    ("findAndModify", {"query": [f"{MARKER}-1"], "remove": True}, "query"),
    ("aggregate", {"pipeline": [{"$match": {}}, f"{MARKER}-1"], "cursor": {}}, "pipeline stage"),
    ("aggregate", {"pipeline": [{"$limit": 1, "$match": {"ssn": f"{MARKER}-1"}}], "cursor": {}}, "pipeline stage"),
]


@pytest.mark.parametrize("command,args,what", MALFORMED, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(MALFORMED)])
def test_malformed_commands_are_refused_by_the_proxy(populated, raw, command, args, what):
    before = snapshot(raw)
    refused(lambda: populated.database.command(command, "people", **args), what)
    assert snapshot(raw) == before


REFUSED_UPDATES = [
    {"$pop": {"phones": 1}},
    {"$pullAll": {"phones": ["+1 1"]}},
    {"$pull": {"items": {"price": 11}}},
    {"$push": {"phones": "+0"}},
    {"$addToSet": {"phones": "+0"}},
    {"$pull": {"phones": "+1 1"}},
    {"$rename": {"ssn": "social"}},
    {"$rename": {"name": "ssn"}},
    {"$set": {"profile.score": 5}},
    {"$set": {"phones.0": "+0"}},
    {"$currentDate": {"age": True}},
    {"$addToSet": {"items": {"sku": "c", "price": 1}}},
    [{"$set": {"age": {"$add": ["$age", 1]}}}],
    [{"$set": {"ssn": "literal"}}],
]


def snapshot(raw):
    return list(raw.people.find().sort("_id", ASCENDING))


def refused(fn, field, ns="enc.people"):
    with pytest.raises(OperationFailure) as e:
        fn()
    assert e.value.code in (9720010, 9720011), e.value.details
    assert e.value.details["codeName"] in ("FleProxyUnsupportedOnEncryptedField", "FleProxyUnsupportedCommand")
    assert ns in str(e.value) and field in str(e.value), str(e.value)
    assert str(e.value).startswith("mongo-fle-proxy: ")
    return e.value


@pytest.mark.parametrize("command,args,field", REFUSED, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(REFUSED)])
def test_refused_reads_say_why(populated, raw, command, args, field):
    before = snapshot(raw)
    if command == "explain":
        refused(lambda: populated.database.command("explain", {"find": "people", "filter": {"ssn": "x"}}), field)
    else:
        refused(lambda: populated.database.command(command, "people", **args), field)
    assert snapshot(raw) == before


@pytest.mark.parametrize("command,args,field", REFUSED_WRITES,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(REFUSED_WRITES)])
def test_refused_filters_of_writes_leave_the_data_untouched(populated, raw, command, args, field):
    before = snapshot(raw)
    refused(lambda: populated.database.command(command, "people", **args), field)
    assert snapshot(raw) == before


@pytest.mark.parametrize("update", REFUSED_UPDATES, ids=[str(i) for i in range(len(REFUSED_UPDATES))])
def test_refused_updates_leave_the_data_untouched(populated, raw, update):
    before = snapshot(raw)
    name = next(iter(update[0] if isinstance(update, list) else update))
    field = [k for k in ("ssn", "age", "phones", "profile", "items") if k in str(update)][0]
    refused(lambda: populated.update_one({"_id": 1}, update), field)
    refused(lambda: populated.find_one_and_update({"_id": 1}, update), field)
    assert snapshot(raw) == before, name


def test_allowed_updates_keep_encrypting(populated, raw, kms):
    populated.update_one({"_id": 5}, {"$set": {"address": {"street": "New St", "city": "Busan"}, "age": 40},
                                      "$push": {"items": {"sku": "z", "price": 99}}, "$unset": {"phones": ""}})
    doc = populated.find_one({"_id": 5})
    assert doc["address"] == {"street": "New St", "city": "Busan"} and doc["age"] == 40 and "phones" not in doc
    assert doc["items"][-1] == {"sku": "z", "price": 99}
    stored = raw.people.find_one({"_id": 5})
    assert_envelope(stored["address"]["street"], kms.keys["ARIA-128"], 0x02)
    assert_envelope(stored["items"][-1]["price"], kms.keys["ARIA-128"], 0x02)
    populated.update_one({"_id": 100, "ssn": "new-person"}, {"$set": {"name": "up"}}, upsert=True)
    assert populated.find_one({"ssn": "new-person"})["_id"] == 100
    assert_envelope(raw.people.find_one({"_id": 100})["ssn"], kms.keys["ARIA-128"], 0x02)
    populated.delete_many({"ssn": "new-person"})
    assert populated.count_documents({"_id": 100}) == 0


@pytest.mark.parametrize("filters", [
    [{"e.price": 11}],
    [{"e.price": {"$gt": 0}}],
    [{"e": {"sku": "a", "price": 11}}],
    [{"$or": [{"e.sku": "b"}, {"e.price": 11}]}],
    [{"e.sku": "a"}, {"unused.sku": "a"}],
], ids=["equality", "range", "whole-element", "or", "unknown-identifier"])
def test_array_filters_on_encrypted_fields_are_refused(populated, raw, filters):
    before = snapshot(raw)
    update = {"$set": {"items.$[e].sku": "changed"}}
    field = "unused" if "unused.sku" in str(filters) else "items"
    refused(lambda: populated.update_one({"_id": 1}, update, array_filters=filters), field)
    refused(lambda: populated.find_one_and_update({"_id": 1}, update, array_filters=filters), field)
    assert snapshot(raw) == before


def test_array_filters_on_unencrypted_fields_update_and_encrypt(populated, raw, kms):
    populated.update_one({"_id": 6}, {"$set": {"items.$[e].price": 77}}, array_filters=[{"e.sku": "a"}])
    assert populated.find_one({"_id": 6})["items"] == [{"sku": "a", "price": 77}, {"sku": "b", "price": Decimal128("2.50")}]
    assert_envelope(raw.people.find_one({"_id": 6})["items"][0]["price"], kms.keys["ARIA-128"], 0x02)
    populated.update_one({"_id": 6}, {"$set": {"items.$[e].price": 16}}, array_filters=[{"e.sku": "a"}])
    assert populated.find_one({"_id": 6}) == people()[6]


@pytest.mark.parametrize("stage", [
    {"$merge": {"into": {"db": "enc", "coll": "people"}}},
    {"$out": {"db": "enc", "coll": "people"}},
    {"$lookup": {"from": {"db": "enc", "coll": "people"}, "localField": "_id", "foreignField": "_id", "as": "p"}},
    {"$unionWith": {"db": "enc", "coll": "people"}},
    {"$facet": {"f": [{"$lookup": {"from": "x", "as": "y",
                                   "pipeline": [{"$unionWith": {"db": "enc", "coll": "people"}}]}}]}},
], ids=["merge", "out", "lookup", "unionWith", "nested"])
def test_aggregates_from_a_database_without_policy_cannot_reach_an_encrypted_collection(populated, raw, stage):
    # The embedded backend runs the $merge: without the check it would write plaintext into enc.people.
    other = populated.database.client.other
    other.src.drop()
    other.src.insert_one({"_id": 1, "ssn": f"{MARKER}-cross", "name": "intruder"})
    before = snapshot(raw)
    refused(lambda: list(other.src.aggregate([{"$match": {}}, stage])), "enc.people")
    assert snapshot(raw) == before


def test_commands_that_move_data_between_collections_are_refused(populated, raw):
    before = snapshot(raw)
    admin = populated.database.client.admin
    refused(lambda: admin.command("renameCollection", "enc.people", to="enc.people_renamed"), "renameCollection")
    raw.rename_source.drop()
    raw.rename_source.insert_one({"_id": 1, "ssn": "plain"})
    refused(lambda: admin.command("renameCollection", "enc.rename_source", to="enc.people", dropTarget=True),
            "renameCollection")
    refused(lambda: admin.command("applyOps", [{"op": "i", "ns": "enc.people", "o": {"_id": 500, "ssn": MARKER}}]),
            "applyOps")
    refused(lambda: list(populated.database.people_plain.aggregate([
        {"$lookup": {"from": "people", "localField": "_id", "foreignField": "_id", "as": "p"}}])), "$lookup")
    assert snapshot(raw) == before
    assert "people_renamed" not in raw.list_collection_names()


def index_specs(raw):
    return sorted((i["name"], dict(i.get("partialFilterExpression", {}))) for i in raw.people.list_indexes())


@pytest.mark.parametrize("partial,field", [
    ({"ssn": f"{MARKER}-1"}, "ssn"),
    ({"age": {"$gt": 30}}, "age"),
    ({"$or": [{"name": "n1"}, {"address.street": "1 Main St"}]}, "address.street"),
])
def test_partial_index_filters_on_encrypted_fields_are_refused(populated, raw, partial, field):
    # The embedded backend stores partialFilterExpression as given: it would hold the plaintext.
    before, indexes = snapshot(raw), index_specs(raw)
    refused(lambda: populated.create_index([("name", ASCENDING)], name="partial_refused",
                                           partialFilterExpression=partial), field)
    assert index_specs(raw) == indexes and MARKER not in str(index_specs(raw))
    assert snapshot(raw) == before


def test_indexes_on_encrypted_fields_are_created(populated, raw):
    populated.create_index([("ssn", ASCENDING)], name="ssn_exists", partialFilterExpression={"ssn": {"$exists": True}})
    assert ("ssn_exists", {"ssn": {"$exists": True}}) in index_specs(raw)
    assert [d["_id"] for d in populated.find({"ssn": f"{MARKER}-1"}).sort("_id", ASCENDING)] == [1, 4, 7, 10]
    populated.drop_index("ssn_exists")


def test_validators_on_encrypted_fields_are_refused(populated, raw):
    before = snapshot(raw)
    db = populated.database
    refused(lambda: db.command("collMod", "people", validator={"ssn": {"$in": [f"{MARKER}-1"]}}), "ssn")
    refused(lambda: db.command("create", "aes", validator={"s": {"$type": "string"}}), "'s'", ns="enc.aes")
    refused(lambda: db.command("create", "people", viewOn="people_plain", pipeline=[]), "view")
    assert snapshot(raw) == before


def test_plaintext_in_a_policy_field_fails_the_read_by_default(via, raw):
    raw.people.delete_many({"_id": {"$gte": 200}})
    raw.people.insert_one({"_id": 200, "ssn": "plain-old", "address": {"street": "Old St"}})
    with pytest.raises(OperationFailure) as e:
        via.people.find_one({"_id": 200})
    assert e.value.code == 9720021 and "enc.people" in str(e.value) and "'ssn'" in str(e.value)
    assert "plain-old" not in str(e.value)
    raw.people.delete_many({"_id": 200})


def test_a_tampered_envelope_fails_the_read_with_a_clear_error(via, raw):
    via.tamper.drop()
    via.aes.delete_many({"_id": 300})
    via.aes.insert_one({"_id": 300, "s": "secret"})
    stored = raw.aes.find_one({"_id": 300})["s"]
    bad = bytearray(stored)
    bad[-1] ^= 1
    raw.aes.update_one({"_id": 300}, {"$set": {"s": Binary(bytes(bad), 0)}})
    with pytest.raises(OperationFailure) as e:
        via.aes.find_one({"_id": 300})
    assert e.value.code == 9720021 and e.value.details["codeName"] == "FleProxyDecryptionFailed"
    assert "enc.aes" in str(e.value) and "'s'" in str(e.value) and "secret" not in str(e.value)
    via.aes.delete_one({"_id": 300})


def test_changing_a_collections_key_on_reload(workdir, backend, kms, raw):
    p = EncryptingProxy(workdir, backend.port, kms, policy_yaml(kms), name="proxy-rotate").start()
    old_key, new_key = uuid.UUID(kms.keys["ARIA-128"]), uuid.UUID(kms.keys["ARIA-256"])
    try:
        with client(p.uri()) as c:
            rot = c.enc.people
            rot.delete_many({"_id": {"$gte": 400}})
            rot.insert_one({"_id": 400, "ssn": "before", "name": "old key"})

            # A new key that drops the old one from the keys enc.people's envelopes may be opened
            # with (_id 400 is under it): a reload does not apply it, a restart would. One WARN line
            # says so, and the old policy stays.
            p.mark_log()
            p.write(policy_yaml(kms, people_key="ARIA-256"))
            p.proc.send_signal(signal.SIGHUP)
            lines = p.new_log_lines("not applied", timeout=20)
            assert lines, p.log_text()[-2000:]
            assert "WARN" in lines[0] and f"would remove or lower: key {old_key} of enc.people." in lines[0], lines
            assert "previous policy stays in force; a restart applies the new file" in lines[0], lines
            warned = p.new_log_lines(" WARN ", timeout=0)
            assert all("not applied" in l for l in warned), warned  # nothing else, e.g. the new file's 3DES warning
            assert not p.new_log_lines("policy reloaded", timeout=0)
            rot.insert_one({"_id": 401, "ssn": "still old", "name": "old key"})
            assert raw.people.find_one({"_id": 401})["ssn"][2:18] == old_key.bytes

            # The same new key, the old one kept in previousKeys: applied.
            p.mark_log()
            p.write(policy_yaml(kms, people_key="ARIA-256", people_previous_keys=["ARIA-128"]))
            p.proc.send_signal(signal.SIGHUP)
            assert p.new_log_lines("policy reloaded", timeout=20), p.log_text()[-2000:]
            rot.insert_one({"_id": 402, "ssn": "after", "name": "new key"})
            assert rot.find_one({"_id": 400})["ssn"] == "before"
            assert rot.find_one({"_id": 401})["ssn"] == "still old"
            assert rot.find_one({"_id": 402})["ssn"] == "after"
            assert raw.people.find_one({"_id": 400})["ssn"][2:18] == old_key.bytes
            assert raw.people.find_one({"_id": 402})["ssn"][2:18] == new_key.bytes

            # A broken policy is not applied: the old one stays, and the log says why.
            p.mark_log()
            p.config.write_text(p.config.read_text().replace("fields:", "feilds:", 1))
            assert p.new_log_lines("keeping the previous policy", timeout=20)
            rot.insert_one({"_id": 403, "ssn": "still"})
            assert raw.people.find_one({"_id": 403})["ssn"][2:18] == new_key.bytes

            # So is one with a path the rewriter would take for an array index ("scores.2024").
            p.mark_log()
            p.write(policy_yaml(kms, people_key="ARIA-256", people_previous_keys=["ARIA-128"])
                    .replace("profile: {}", "profile: {}\n      scores.2024: {}"))
            lines = p.new_log_lines("keeping the previous policy", timeout=20)
            assert lines and "'scores.2024' has an all-digit segment" in lines[0], p.log_text()[-2000:]
            rot.insert_one({"_id": 404, "ssn": "still here"})
            assert raw.people.find_one({"_id": 404})["ssn"][2:18] == new_key.bytes
            rot.delete_many({"_id": {"$gte": 400}})
    finally:
        p.stop()


def test_get_more_batches_are_decrypted(via):
    c = via.aria
    c.drop()
    c.insert_many([{"_id": i, "v": f"value {i}"} for i in range(50)])
    assert [d["v"] for d in c.find().sort("_id", ASCENDING).batch_size(7)] == [f"value {i}" for i in range(50)]


def nested_aggregate(collection: str, db: str, depth: int) -> bytes:
    """An aggregate whose $match is `depth` documents deep, built without recursion (bson.encode
    would recurse as deep); a few hundred thousand levels overflow any recursive decoder."""
    import struct
    from wire import op_msg
    lengths = [5]
    for _ in range(depth):
        lengths.append(lengths[-1] + 8)  # int32 length, type 0x03, "a\0", the child, the closing 0
    deep = b"".join(struct.pack("<i", lengths[d]) + b"\x03a\x00" for d in range(depth, 0, -1))
    deep += b"\x05\x00\x00\x00\x00" + b"\x00" * depth
    match = b"\x03$match\x00" + deep
    stage = struct.pack("<i", len(match) + 5) + match + b"\x00"
    pipeline = struct.pack("<i", len(stage) + 8) + b"\x030\x00" + stage + b"\x00"
    head = bson.encode({"aggregate": collection, "cursor": {}, "$db": db})
    body = head[4:-1] + b"\x04pipeline\x00" + pipeline
    return op_msg(None, sections=b"\x00" + struct.pack("<i", len(body) + 5) + body + b"\x00")


@pytest.mark.parametrize("collection,db", [("people", "enc"), ("other", "other")])
def test_documents_nested_too_deeply_close_only_that_connection(enc, via, collection, db):
    import socket
    from wire import closed_by_peer
    enc.mark_log()
    with socket.create_connection(("127.0.0.1", enc.port)) as s:
        s.sendall(nested_aggregate(collection, db, 300_000))
        assert closed_by_peer(s, timeout=30)
    lines = enc.new_log_lines("closed: malformed BSON")
    assert len(lines) == 1 and "nested too deeply" in lines[0] and "WARN" in lines[0], lines
    assert enc.alive() and "StackOverflowError" not in enc.log_text()
    assert via.command("ping")["ok"] == 1.0
