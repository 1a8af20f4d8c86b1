"""$out and $merge at the end of an aggregate the proxy evaluates (a $sort on a randomized field):
the proxy writes the output itself, each document sealed by the TARGET's policy, and refuses
(fail closed) a target that would store an encrypted field's values unencrypted. Each target is
read back through the proxy and held against the same pipeline run directly on a plaintext twin
of the data in the backend; a recording relay shows what the server was sent."""
import pytest
from bson import Binary
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

SECRET = "zq9secret"  # in every x: must never reach the server in clear


def policy(kms):
    aes, aria = kms.keys["AES-256"], kms.keys["ARIA-256"]
    return (f"  out.src: {{ key: {aes}, fields: {{ x: {{}}, s: {{ deterministic: true }} }} }}\n"
            f"  out.same: {{ key: {aes}, fields: {{ x: {{}}, s: {{ deterministic: true }} }} }}\n"
            f"  out.other: {{ key: {aria}, fields: {{ x: {{}}, s: {{ deterministic: true }} }} }}\n"
            f"  out.det_x: {{ key: {aes}, fields: {{ x: {{ deterministic: true }}, s: {{ deterministic: true }} }} }}\n"
            f"  out.rnd_s: {{ key: {aes}, fields: {{ x: {{}}, s: {{}} }} }}\n"
            f"  out.star: {{ key: {aria}, fields: \"*\" }}\n"
            f"  out.merged: {{ key: {aria}, fields: {{ x: {{}}, s: {{ deterministic: true }} }} }}\n")


@pytest.fixture(scope="module")
def enc(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-evaluated-out").start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def via(enc):
    c = client(enc.uri())
    yield c.out
    c.close()


@pytest.fixture(scope="module")
def plain(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.plain_out_twins
    c.close()


@pytest.fixture(scope="module")
def stored(backend):
    """The backend as the server holds it: envelopes where the policy encrypts."""
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.out
    c.close()


DOCS = [{"_id": i, "n": i % 3, "x": (i * 7) % 11 if i % 4 else f"{SECRET}-{i}", "s": f"s{i % 5}"}
        for i in range(12)]


@pytest.fixture
def loaded(via, plain):
    via.src.drop()
    via.src.insert_many([dict(d) for d in DOCS])
    plain.src.drop()
    plain.src.insert_many([dict(d) for d in DOCS])
    return via, plain


def by_id(coll):
    return list(coll.find().sort("_id", 1))


def both(loaded, pipeline, target, seed=None):
    """Runs the pipeline through the proxy and directly on the twins, the target seeded alike first."""
    via, plain = loaded
    for db in (via, plain):
        db[target].drop()
        if seed:
            db[target].insert_many([dict(d) for d in seed])
    got = list(via.src.aggregate(pipeline))
    want = list(plain.src.aggregate(pipeline))
    assert got == want == []
    return by_id(via[target]), by_id(plain[target])


SORT_ON_X = [{"$sort": {"x": 1, "_id": 1}}, {"$match": {"_id": {"$gt": 1}}}]


@pytest.mark.parametrize("target", ["same", "other", "star"])
def test_out_after_a_sort_on_a_randomized_field_into_encrypted_targets(loaded, stored, target):
    got, want = both(loaded, SORT_ON_X + [{"$out": target}], target)
    assert got == want and len(got) == 10
    # stored sealed under the target's own policy: x (and under "*" every field) an envelope
    for d in stored[target].find():
        assert isinstance(d["x"], bytes | Binary)
        assert isinstance(d["n"], bytes | Binary) == (target == "star")


def test_out_replaces_the_target_and_keeps_its_indexes(loaded, via):
    got, want = both(loaded, SORT_ON_X + [{"$limit": 4}, {"$out": "same"}], "same",
                     seed=[{"_id": 100, "x": 1}, {"_id": 3, "x": "old"}])
    assert got == want and len(got) == 4  # the seed is gone, replaced as one step
    # MongoDB's $out keeps the target's indexes (the embedded backend's own $out does not)
    via.same.drop()
    via.same.insert_one({"_id": 100})
    via.same.create_index("n", name="n_1")
    list(via.src.aggregate(SORT_ON_X + [{"$out": "same"}]))
    assert "n_1" in [i["name"] for i in via.same.list_indexes()]
    assert not [c for c in via.list_collection_names() if c.startswith("tmp.agg_out.")]


def test_out_of_nothing_leaves_an_empty_target(loaded):
    got, want = both(loaded, [{"$sort": {"x": 1}}, {"$match": {"n": 99}}, {"$out": "same"}], "same",
                     seed=[{"_id": 1, "x": 5}])
    assert got == want == []


def test_out_into_a_plain_target_only_without_encrypted_values(loaded, via, backend):
    got, want = both(loaded, [{"$sort": {"x": -1}}, {"$limit": 5}, {"$project": {"x": 0, "s": 0}},
                              {"$out": "plain_target"}], "plain_target")
    assert got == want and len(got) == 5
    via.plain_target.drop()
    via.plain_target.insert_one({"_id": "before"})
    for pipeline in ([{"$sort": {"x": 1}}, {"$out": "plain_target"}],
                     [{"$sort": {"x": 1}}, {"$project": {"y": "$x"}}, {"$out": "plain_target"}],
                     [{"$sort": {"x": 1}}, {"$unset": "x"}, {"$out": "plain_target"}]):  # s is encrypted too
        with pytest.raises(OperationFailure) as e:
            list(via.src.aggregate(pipeline))
        assert e.value.code == 9720010, e.value.details
        assert "does not encrypt" in str(e.value) and "plaintext" in str(e.value)
    assert by_id(via.plain_target) == [{"_id": "before"}]  # refused before anything was read or written


@pytest.mark.parametrize("pipeline,why", [
    ([{"$sort": {"x": 1}}, {"$out": "det_x"}], "deterministic"),  # randomized x would show its equalities
    ([{"$sort": {"x": 1}}, {"$group": {"_id": "$x", "c": {"$sum": 1}}}, {"$out": "same"}], "_id"),
    ([{"$sort": {"x": 1}}, {"$project": {"n": 1, "s": 1, "y": "$x"}}, {"$out": "same"}], "'y'"),
    ([{"$sort": {"x": 1}}, {"$out": "star"}], None),  # allowed: "*" encrypts every field
    ([{"$sort": {"x": 1}}, {"$merge": {"into": "same", "on": "x"}}], "only when the field is deterministic"),
    ([{"$sort": {"x": 1}}, {"$merge": {"into": "rnd_s", "on": "s"}}], "deterministic"),
    ([{"$sort": {"x": 1}}, {"$merge": {"into": "same", "whenMatched": [{"$set": {"a": 1}}]}}], "pipeline"),
    ([{"$sort": {"x": 1}}, {"$merge": {"into": "same", "whenMatched": "fail", "whenNotMatched": "discard"}}],
     "does not support"),
])
def test_targets_that_would_weaken_protection_are_refused(loaded, pipeline, why):
    via, _ = loaded
    if why is None:
        list(via.src.aggregate(pipeline))
        return
    with pytest.raises(OperationFailure) as e:
        list(via.src.aggregate(pipeline))
    assert e.value.code in (9720010, 9720011), e.value.details
    assert why in str(e.value)


SEED = [{"_id": 0, "y": "old"}, {"_id": 3, "y": "old", "x": "kept"}, {"_id": 20, "y": "old"}]
MODES = [("replace", "insert"), ("replace", "discard"), ("replace", "fail"), ("merge", "insert"),
         ("merge", "discard"), ("merge", "fail"), ("keepExisting", "insert"), ("fail", "insert")]


@pytest.mark.parametrize("matched,not_matched", MODES)
def test_merge_modes_answer_as_the_server_does(loaded, matched, not_matched):
    via, plain = loaded
    pipeline = SORT_ON_X + [{"$project": {"x": 1, "n": 1}},
                            {"$merge": {"into": "same", "whenMatched": matched, "whenNotMatched": not_matched}}]
    if matched == "fail" or not_matched == "fail":
        # both fail: a document of the output matches (3) and others do not
        codes = []
        for db in (via, plain):
            db.same.drop()
            db.same.insert_many([dict(d) for d in SEED])
            with pytest.raises(OperationFailure) as e:
                list(db.src.aggregate(pipeline))
            codes.append(e.value.code)
        assert codes[0] == codes[1], codes
        return
    got, want = both(loaded, pipeline, "same", seed=SEED)
    assert got == want


def test_merge_on_a_deterministic_field_into_another_key(loaded, via, plain):
    for db in (via, plain):
        db.merged.drop()
        db.merged.create_index("s", unique=True)
        db.merged.insert_many([{"_id": "a", "s": "s1", "y": "old"}, {"_id": "b", "s": "s9", "y": "old"}])
    pipeline = [{"$sort": {"x": -1}}, {"$group": {"_id": "$s", "n": {"$sum": "$n"}}},
                {"$project": {"_id": 0, "s": "$_id", "n": 1}},
                {"$merge": {"into": "merged", "on": "s", "whenMatched": "merge", "whenNotMatched": "insert"}}]
    assert list(via.src.aggregate(pipeline)) == list(plain.src.aggregate(pipeline)) == []

    def without_generated_ids(coll):
        return sorted(({k: v for k, v in d.items() if k != "_id" or isinstance(v, str)} for d in coll.find()),
                      key=lambda d: d["s"])
    assert without_generated_ids(via.merged) == without_generated_ids(plain.merged)


def test_merge_shorthand_and_a_target_in_another_database(loaded, via, plain, enc):
    got, want = both(loaded, SORT_ON_X + [{"$project": {"s": 0}}, {"$merge": "same"}], "same")
    assert got == want
    c = client(enc.uri())
    try:
        c.other_db.t.drop()
        with pytest.raises(OperationFailure) as e:  # x would be plaintext there
            list(via.src.aggregate(SORT_ON_X + [{"$merge": {"into": {"db": "other_db", "coll": "t"}}}]))
        assert e.value.code == 9720010
        list(via.src.aggregate(SORT_ON_X + [{"$project": {"n": 1}}, {"$out": {"db": "other_db", "coll": "t"}}]))
        assert sorted(d["_id"] for d in c.other_db.t.find()) == list(range(2, 12))
    finally:
        c.close()


def test_no_plaintext_of_x_reaches_the_server(loaded, relay):
    via, _ = loaded
    relay.clear()
    list(via.src.aggregate(SORT_ON_X + [{"$out": "other"}]))
    list(via.src.aggregate(SORT_ON_X + [{"$merge": {"into": "same", "whenMatched": "replace"}}]))
    sent = relay.captured()
    assert SECRET.encode() not in sent
    assert b"renameCollection" in sent and b"tmp.agg_out." in sent  # the $out went the server's way
    assert b"$sort" not in sent  # the sort on x stayed in the proxy
    assert {d["x"] for d in via.other.find() if isinstance(d["x"], str)} == {f"{SECRET}-{i}" for i in (4, 8)}


def test_inserts_go_in_id_order_not_the_sort_order(loaded, relay):
    via, _ = loaded
    via.same.drop()
    relay.clear()
    list(via.src.aggregate([{"$sort": {"x": -1}}, {"$match": {"x": {"$type": "number"}}}, {"$out": "same"}]))
    sent = relay.captured()
    at = sent.index(b"tmp.agg_out.", sent.index(b"insert"))
    ids = [i for i in range(12) if i % 4]  # numbers in x
    positions = [sent.index(b"\x10_id\x00" + i.to_bytes(4, "little"), at) for i in ids]
    assert positions == sorted(positions)


def test_an_identity_that_sees_a_mask_may_not_write_the_output(workdir, relay, kms):
    """With access rules, $out writes what the identity sees: refused unless it sees every field."""
    aes = kms.keys["AES-256"]
    rules = (f"  out.src: {{ key: {aes}, fields: {{ x: {{ reveal: [nobody], mask: redact, query: [anonymous, nobody] }}, s: {{ deterministic: true }} }} }}\n"
             f"  out.same: {{ key: {aes}, fields: {{ x: {{}}, s: {{ deterministic: true }} }} }}\n")
    p = EncryptingProxy(workdir, relay.port, kms, rules, name="proxy-evaluated-out-masked")
    p.config.write_text(p.config.read_text() + "identities:\n  nobody: { user: nobody@admin }\n")
    p.start()
    try:
        c = client(p.uri())
        with pytest.raises(OperationFailure) as e:
            list(c.out.src.aggregate(SORT_ON_X + [{"$out": "same"}]))
        assert e.value.code == 9720040, e.value.details
        c.close()
    finally:
        p.stop()
