"""The server's prefix of an aggregate the proxy evaluates: the longest leading part that touches
no encrypted path ($match parts, $sort/$skip/$limit, plain $project/$set/$unset, $unwind and
$lookup of plain fields) runs on the server, read with an aggregate when it reaches past what a
find expresses; the rest runs in the proxy. Each answer is held against the same pipeline on a
plaintext twin of the data, stored directly in the backend; a recording relay shows what the
server was sent: the plain stages, and nothing of an encrypted field in clear."""

import pytest
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

SECRET = "zq8"  # every encrypted value begins so: it must never reach the server in clear
AGGREGATE = b"\x02aggregate\x00"
FIND = b"\x02find\x00"


def policy(kms):
    key = kms.keys["AES-256"]
    return (f"  pre.people: {{ key: {key}, fields: {{ ssn: {{}}, det: {{ deterministic: true }}, card.no: {{}} }} }}\n"
            f"  pre.star: {{ key: {key}, fields: \"*\" }}\n"
            f"  pre.other: {{ key: {key}, fields: {{ q: {{}} }} }}\n"
            f"  pre.small: {{ key: {key}, fields: {{ ssn: {{}} }}, maxScanDocuments: 50 }}\n")


@pytest.fixture(scope="module")
def enc(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-evaluated-prefix").start()
    yield p
    p.stop()


CITIES = ["Lyon", "Oslo", "Porto", "Nowhere"]
PEOPLE = [{"_id": i, "n": i % 4, "city": CITIES[i % 4], "tags": ["t%d" % (i % 3), "u"][: 1 + i % 2],
           "ssn": f"{SECRET}-{(i * 7) % 13:02d}", "det": f"{SECRET}d{i % 3}",
           "card": {"no": f"{SECRET}c{i}", "kind": "visa" if i % 2 else "amex"}} for i in range(20)]
PLAIN_CITIES = [{"_id": 1, "name": "Lyon", "country": "FR"}, {"_id": 2, "name": "Oslo", "country": "NO"},
                {"_id": 3, "name": "Porto", "country": "PT"}, {"_id": 4, "name": "Lyon", "country": "US"}]


@pytest.fixture(scope="module")
def loaded(enc, backend):
    via, direct = client(enc.uri()), client(f"mongodb://127.0.0.1:{backend.port}")
    for db in (via.pre, direct.plain_prefix_twins):
        for name in ("people", "star", "cities", "small"):
            db[name].drop()
        db.people.insert_many(PEOPLE)
        db.star.insert_many([{"_id": d["_id"], "n": d["n"], "ssn": d["ssn"]} for d in PEOPLE])
        db.cities.insert_many(PLAIN_CITIES)
    yield via.pre, direct.plain_prefix_twins
    via.close()
    direct.close()


PIPELINES = [
    # plain stages of every kind before a residual $match and a sort the proxy runs
    [{"$match": {"n": {"$lt": 3}}}, {"$project": {"n": 1, "ssn": 1, "tags": 1, "city": 1}},
     {"$unwind": "$tags"},
     {"$lookup": {"from": "cities", "localField": "city", "foreignField": "name", "as": "c"}},
     {"$set": {"countries": {"$size": "$c"}}}, {"$match": {"ssn": {"$regex": "^" + SECRET + "-0"}}},
     {"$sort": {"ssn": 1, "tags": 1}}],
    # a field computed on the server, matched there, then a $group by an encrypted field
    [{"$set": {"k": {"$multiply": ["$n", 10]}}}, {"$match": {"k": {"$gte": 10}}},
     {"$group": {"_id": "$ssn", "t": {"$sum": "$k"}}}, {"$sort": {"_id": 1}}],
    # an encrypted field dropped on the server, another sorted by the proxy
    [{"$unset": ["card", "det"]}, {"$sort": {"ssn": -1}}],
    # a limit, then an inclusion keeping an encrypted field in place, then a condition on it
    [{"$sort": {"_id": 1}}, {"$limit": 9}, {"$project": {"card": 1, "n": 1}},
     {"$match": {"card.no": {"$gt": SECRET + "c3"}}}, {"$sort": {"card.no": 1}}],
    # deterministic equality after a projection: the server matches its envelope
    [{"$project": {"det": 1, "n": 1, "ssn": 1}}, {"$match": {"det": SECRET + "d1"}}, {"$sort": {"ssn": -1}}],
    # $unwind with an index, a $skip between plain stages
    [{"$unwind": {"path": "$tags", "includeArrayIndex": "i"}}, {"$skip": 3}, {"$addFields": {"j": {"$add": ["$i", 1]}}},
     {"$group": {"_id": "$ssn", "js": {"$sum": "$j"}}}, {"$sort": {"_id": 1}}],
]


def on_plaintext(pipeline):
    """The pipeline as the embedded backend takes it: it knows $set by its older name only,
    $addFields (the proxy sends it so too)."""
    return [{"$addFields": s["$set"]} if "$set" in s else s for s in pipeline]


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[str(i) for i in range(len(PIPELINES))])
def test_answers_are_the_servers_on_plaintext(loaded, relay, pipeline):
    via, plain = loaded
    relay.clear()
    got = list(via.people.aggregate(pipeline))
    sent = relay.captured()
    assert got == list(plain.people.aggregate(on_plaintext(pipeline)))
    assert got  # not vacuous
    assert AGGREGATE in sent and FIND not in sent
    assert SECRET.encode() not in sent  # no encrypted value, no residual constant


def test_the_server_is_sent_the_plain_stages_and_the_proxy_runs_the_rest(loaded, relay):
    via, _ = loaded
    relay.clear()
    list(via.people.aggregate(PIPELINES[0]))
    sent = relay.captured()
    for stage in (b"\x03$match\x00", b"\x03$project\x00", b"\x02$unwind\x00", b"\x03$lookup\x00", b"\x03$addFields\x00"):
        assert stage in sent, stage
    assert b"$regex" not in sent and b"$sort" not in sent  # the residual and what follows it stay in the proxy
    assert b"\x10$limit\x00\x11\x27\x00\x00" in sent  # int32 10001: the budget and one more, after the server's stages
    assert b"\x10batchSize\x00\x65\x00\x00\x00" in sent  # int32 101, as a find's first batch


def test_a_prefix_a_find_expresses_is_still_read_with_a_find(loaded, relay):
    via, plain = loaded
    pipeline = [{"$match": {"n": 1}}, {"$sort": {"_id": -1}}, {"$limit": 3}, {"$group": {"_id": "$ssn"}},
                {"$sort": {"_id": 1}}]
    relay.clear()
    assert list(via.people.aggregate(pipeline)) == list(plain.people.aggregate(pipeline))
    sent = relay.captured()
    assert FIND in sent and AGGREGATE not in sent


def test_stages_touching_encrypted_paths_stay_with_the_proxy(loaded, relay):
    via, plain = loaded
    # a computed field reading an encrypted one: the proxy runs it (and the $unwind after it it cannot)
    relay.clear()
    pipeline = [{"$set": {"copy": "$ssn"}}, {"$sort": {"copy": 1}}]
    assert list(via.people.aggregate(pipeline)) == list(plain.people.aggregate(on_plaintext(pipeline)))
    assert b"$addFields" not in relay.captured() and b"copy" not in relay.captured()
    with pytest.raises(OperationFailure) as e:
        list(via.people.aggregate([{"$set": {"c": {"$concat": ["$ssn", "-"]}}}, {"$unwind": "$tags"}]))
    assert e.value.code in (9720010, 9720011)
    # a $lookup of an encrypted collection is refused, never sent
    relay.clear()
    with pytest.raises(OperationFailure) as e:
        list(via.people.aggregate([{"$lookup": {"from": "other", "localField": "n", "foreignField": "q", "as": "j"}},
                                   {"$sort": {"ssn": 1}}]))
    assert e.value.code in (9720010, 9720011)
    assert b"$lookup" not in relay.captured()


def test_under_every_field_encrypted_only_inclusion_joins(loaded, relay):
    via, plain = loaded
    pipeline = [{"$project": {"ssn": 1}}, {"$sort": {"ssn": 1}}]
    relay.clear()
    assert list(via.star.aggregate(pipeline)) == list(plain.star.aggregate(pipeline))
    assert b"\x03$project\x00" in relay.captured() and SECRET.encode() not in relay.captured()
    relay.clear()
    pipeline = [{"$set": {"m": "$n"}}, {"$sort": {"ssn": 1}}]
    assert list(via.star.aggregate(pipeline)) == list(plain.star.aggregate(on_plaintext(pipeline)))
    assert b"$addFields" not in relay.captured()


def test_the_budget_counts_what_the_proxy_reads_after_the_servers_stages(loaded):
    via, _ = loaded
    via.small.insert_many([{"_id": i, "n": i % 10, "tags": [1, 2, 3], "ssn": f"{SECRET}{i}"} for i in range(30)])
    # 30 documents, 90 once unwound: over a budget of 50
    with pytest.raises(OperationFailure) as e:
        list(via.small.aggregate([{"$unwind": "$tags"}, {"$sort": {"ssn": 1}}]))
    assert e.value.code == 9720012, e.value.details
    got = list(via.small.aggregate([{"$match": {"n": 1}}, {"$unwind": "$tags"}, {"$sort": {"ssn": 1, "tags": 1}}]))
    assert [(d["_id"], d["tags"]) for d in got] == [(1, 1), (1, 2), (1, 3), (11, 1), (11, 2), (11, 3),
                                                      (21, 1), (21, 2), (21, 3)]


def test_an_outputs_carried_paths_are_followed_through_the_servers_stages(loaded, relay):
    via, plain = loaded
    # the server's $project drops every encrypted field: a target outside the policy may take the output
    pipeline = [{"$project": {"n": 1, "city": 1}}, {"$sort": {"_id": 1}}, {"$out": "people_plain_out"}]
    relay.clear()
    via.people.aggregate(pipeline)
    assert AGGREGATE in relay.captured()
    assert list(via.people_plain_out.find().sort("_id", 1)) == [{"_id": d["_id"], "n": d["n"], "city": d["city"]}
                                                                for d in PEOPLE]
    # one that keeps an encrypted field in place may not: it would be stored in clear
    with pytest.raises(OperationFailure) as e:
        via.people.aggregate([{"$project": {"n": 1, "ssn": 1}}, {"$out": "people_plain_out"}])
    assert e.value.code == 9720010, e.value.details


def test_a_collation_goes_with_the_servers_stages(loaded, relay):
    via, plain = loaded
    # the server applies it to its stages (on plain fields), the proxy to its own (the encrypted
    # sort); the embedded backend applies none in an aggregate, so the answer is held to its own
    pipeline = [{"$project": {"n": 1, "city": 1, "ssn": 1}}, {"$match": {"city": "Lyon"}}, {"$sort": {"ssn": -1}}]
    collation = {"locale": "en", "strength": 2}
    relay.clear()
    got = list(via.people.aggregate(pipeline, collation=collation))
    assert AGGREGATE in relay.captured() and b"\x03collation\x00" in relay.captured()
    assert got == list(plain.people.aggregate(pipeline, collation=collation))
    assert [d["city"] for d in got] == ["Lyon"] * 5
