"""Differential test of the queries the proxy evaluates: the same generated documents (mixed BSON
types, nested documents, arrays, missing and null fields) are stored in an encrypted collection
through the proxy and in a plain collection directly; Hypothesis generates filters, sorts,
projections, skips and limits, and every answer through the proxy must equal the backend's own
answer on plaintext (in order, where sorted).

FLE_DIFF_EXAMPLES sets how many queries run (make test runs a few hundred; `make test-differential`
runs 10,000). Queries that once failed stay below as @example regression cases. FLE_DIFF_EXPLORE=FILE
writes every difference to FILE instead of failing at the first (to survey before fixing); note
that bson's repr shows an Int64 as a bare number."""
import datetime
import os
import random

import pytest
from bson import Int64, ObjectId
from bson.decimal128 import Decimal128
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from pymongo.errors import AutoReconnect, OperationFailure

from conftest import EncryptingProxy, client

TALLY = {"compared": 0, "refused": 0, "writes": 0, "writes refused": 0, "groups": 0, "groups refused": 0}
EXAMPLES = int(os.environ.get("FLE_DIFF_EXAMPLES", "300"))
FIELDS = ["x", "y", "s", "arr", "sub", "sub.v", "sub.w", "n", "arr.k", "nothere"]

SCALARS = [0, 1, 2, -3, 7, 10, Int64(2), Int64(11), 2.5, -0.5, 10.0, Decimal128("7"), Decimal128("1.5"),
           "", "a", "B", "apple", "Apple", "banana", "b10", None, True, False,
           datetime.datetime(2020, 1, 1), datetime.datetime(2024, 6, 1)]


def policy(kms):
    key = kms.keys["ARIA-256"]
    # range indexes on x, y and s (docs/query-model.md#range-indexes): a range the tags narrow must
    # answer as one read whole; their grids leave values of SCALARS off them (-3, 11, 2.5 …: "other");
    # and text indexes of every kind on s (#text-indexes), which holds strings among other values
    fields = ("{ x: { index: { range: { min: -1, max: 10, precision: 1, sparsity: 2 } } }, "
              "y: { deterministic: true, index: { range: { min: 0, max: 8 } } }, "
              "s: { index: { range: { min: -5, max: 10, sparsity: 3 }, prefix: { maxLength: 3, caseFold: true }, "
              "suffix: { maxLength: 3 }, substring: { gramLength: 2, maxLength: 5, caseFold: true } } }, "
              "arr: {}, sub.v: {} }")
    return f"  enc.diff: {{ key: {key}, fields: {fields} }}\n  enc.diff_writes: {{ key: {key}, fields: {fields} }}\n"


def value(rnd: random.Random, depth=0):
    r = rnd.random()
    if r < 0.65 or depth > 1:
        return rnd.choice(SCALARS)
    if r < 0.85:
        return [rnd.choice(SCALARS) if rnd.random() < 0.8 else {"k": rnd.choice(SCALARS)}
                for _ in range(rnd.randrange(0, 4))]
    return {"k": value(rnd, depth + 1), "j": rnd.choice(SCALARS)}


#: the stored forms of y's numbers: each equal by value to the first, as MongoDB compares numbers
Y_FORMS = {1: [1, Int64(1), 1.0, Decimal128("1.0")], 2: [2, Int64(2), 2.0, Decimal128("2")],
           7: [7, 7.0, Decimal128("7"), 2.5, Decimal128("2.50")]}


def y_form(v, forms: random.Random):
    return forms.choice(Y_FORMS[v]) if v in Y_FORMS and not isinstance(v, bool) else v


def documents(seed=28, count=40):
    rnd = random.Random(seed)
    forms = random.Random(seed + 1)
    tags = random.Random(seed + 2)
    docs = []
    for i in range(count):
        d = {"_id": i, "n": rnd.randrange(0, 4)}
        if rnd.random() < 0.9:
            d["x"] = value(rnd)
        if rnd.random() < 0.9:
            # y is deterministic: its numbers come in every type (the proxy asks the server for
            # each form's envelope, docs/query-model.md); no arrays (an encrypted array is one
            # value). The form is drawn from a generator of its own so the other fields' values
            # stay what they were.
            d["y"] = y_form(rnd.choice(["a", "b", "apple", 1, 2, 7, None]), forms)  # see Y_VALUES
        if rnd.random() < 0.85:
            d["arr"] = [rnd.choice(SCALARS) if rnd.random() < 0.7 else {"k": rnd.choice(SCALARS)}
                        for _ in range(rnd.randrange(0, 4))]
        if rnd.random() < 0.9:
            d["s"] = rnd.choice(SCALARS)  # scalars only: a sort key (see sorts below)
        if rnd.random() < 0.85:
            d["sub"] = {"v": value(rnd, 1), "w": rnd.choice(SCALARS)}
        if tags.random() < 0.85:
            # a plain array to unwind, drawn from a generator of its own (the other fields stay as they were)
            d["t"] = tags.choice([[], ["a"], ["a", "b", 1], [2, 2], "s", None, [None]])
        docs.append(d)
    return docs


@pytest.fixture(scope="module")
def twins(workdir, backend, kms):
    proxy = EncryptingProxy(workdir, backend.port, kms, policy(kms), name="proxy-differential").start()
    via, direct = client(proxy.uri()), client(f"mongodb://127.0.0.1:{backend.port}")
    via.enc.diff.drop()
    direct.plain_twins.diff.drop()
    via.enc.diff.insert_many(documents())
    direct.plain_twins.diff.insert_many(documents())
    yield via.enc.diff, direct.plain_twins.diff
    via.close()
    direct.close()
    proxy.stop()


scalars = st.sampled_from(SCALARS)
# y is deterministic: its equality, done by the server on envelopes, matches every numeric form of
# the value (the proxy asks for each form's envelope), so its conditions name numbers in every type
Y_VALUES = ["a", "b", "apple", 1, 2, 7, None, "B", 0, Int64(2), 2.0, Decimal128("2.0"), 7.0, Decimal128("7.00"),
            Int64(1), Decimal128("1"), 2.5, Decimal128("2.5"), 3.0]
fields = st.sampled_from(FIELDS)


SCALAR_FIELDS = ["y", "s", "sub.w", "n", "nothere"]


def conditions(field, scalars=scalars):
    """Conditions on one field. On the fields that hold scalars only, every operator the proxy
    evaluates. On fields that may hold arrays, only what mongo-java-server evaluates as MongoDB
    does: it departs from MongoDB on negations ($ne, $nin, $not, $exists) of paths through arrays,
    on several operators on one array (MongoDB lets each match another element), on $regex and
    $all against non-strings and non-arrays (and $all of null), on ranges bounded by null, and on
    nested arrays. There
    the proxy follows MongoDB, which the evaluator's unit tests and test_evaluated_queries.py check."""
    comparison = st.one_of(
        st.tuples(st.sampled_from(["$eq", "$ne"]), scalars),
        st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), scalars.filter(lambda v: v is not None)),
    ).map(lambda t: {t[0]: t[1]})
    membership = st.tuples(st.sampled_from(["$in", "$nin"]), st.lists(scalars, min_size=0, max_size=3)).map(
        lambda t: {t[0]: t[1]})
    others = st.one_of(
        st.booleans().map(lambda b: {"$exists": b}),
        st.sampled_from(["string", "number", "int", "long", "double", "decimal", "null", "array", "object",
                         "bool", "date", 16, 1]).map(lambda t: {"$type": t}),
        st.integers(0, 3).map(lambda n: {"$size": n}),
        st.tuples(st.sampled_from([2, 3]), st.sampled_from([0, 1])).map(lambda t: {"$mod": [t[0], t[1]]}),
    )
    if field in SCALAR_FIELDS:
        return st.one_of(
            scalars, comparison, membership, others,
            st.tuples(comparison, comparison).map(lambda t: {**t[0], **t[1]}),
            st.one_of(comparison, membership, others).map(lambda c: {"$not": c}),
            st.sampled_from(["^a", "an", "^A", "a$", "^$", "b1", "^app", "ana$", "na", "pp", "PPL", "e$", "a.a",
                             "^b.*0$", "n+a", "ple$", "ana"]).flatmap(
                lambda p: st.sampled_from(["", "i"]).map(lambda o: {"$regex": p, "$options": o})))
    # fields that may hold arrays: the conditions MongoDB and the backend agree on
    positive = st.one_of(
        st.tuples(st.sampled_from(["$eq", "$gt", "$gte", "$lt", "$lte"]), scalars.filter(lambda v: v is not None)).map(
            lambda t: {t[0]: t[1]}),
        st.lists(scalars.filter(lambda v: v is not None), min_size=1, max_size=3).map(lambda v: {"$in": v}),
        st.integers(0, 3).map(lambda n: {"$size": n}))
    choices = [scalars.filter(lambda v: v is not None), positive, positive.map(lambda c: {"$elemMatch": c})]
    if field == "arr":  # ($all: [null] matches a missing field in MongoDB, nothing in the backend)
        choices.append(st.lists(scalars.filter(lambda v: v is not None), min_size=1, max_size=2).map(
            lambda v: {"$all": v}))
    return st.one_of(*choices)


@st.composite
def filters(draw, depth=0):
    n = draw(st.integers(0, 3))
    flt = {}
    for _ in range(n):
        field = draw(fields)
        flt[field] = draw(conditions(field, st.sampled_from(Y_VALUES)) if field == "y" else conditions(field))
    if depth < 1 and draw(st.booleans()):
        op = draw(st.sampled_from(["$and", "$or", "$nor"]))
        flt[op] = draw(st.lists(filters(depth + 1), min_size=1, max_size=3))
    return flt


# Sorts on fields that hold scalars only: mongo-java-server orders arrays (empty ones, nested ones)
# otherwise than MongoDB does; DocumentSortTest holds the proxy to MongoDB's rules for arrays.
sorts = st.lists(st.tuples(st.sampled_from(["s", "y", "sub.w", "n", "nothere"]), st.sampled_from([1, -1])),
                 min_size=0, max_size=2, unique_by=lambda t: t[0])
projections = st.one_of(
    st.none(),
    st.lists(st.sampled_from(["x", "y", "arr", "sub.v", "sub", "n"]), min_size=1, max_size=3, unique=True).flatmap(
        lambda names: st.sampled_from([0, 1]).map(lambda v: {name: v for name in names})),
    # with an inclusion: mongo-java-server projects a $slice alone as an inclusion, MongoDB does
    # not (test_evaluated_queries.py holds the proxy to MongoDB's rule)
    st.sampled_from([1, -1, 2]).map(lambda n: {"arr": {"$slice": n}, "x": 1}),
)


def answer(coll, flt, sort, projection, skip, limit):
    try:
        cursor = coll.find(flt, projection, skip=skip, limit=limit)
        if sort:
            cursor = cursor.sort(sort + [("_id", 1)])  # ties broken by _id: both sides' order is then defined
        docs = list(cursor)
        return ("ok", docs if sort else sorted(docs, key=lambda d: repr(d.get("_id"))))
    except OperationFailure as e:
        return ("error", e.code)
    except AutoReconnect:
        if coll.database.name != "plain_twins":
            raise
        return ("error", "the backend closed the connection")  # mongo-java-server fails on some $slice


def first_difference(got, want):
    if got[0] != want[0]:
        return f"proxy {got}, backend {want}"
    for i, (g, w) in enumerate(zip(got[1], want[1])):
        if g != w:
            return f"at {i}: proxy {g!r} backend {w!r}"
    return f"proxy {len(got[1])} documents, backend {len(want[1])}: {got[1][len(want[1]):]!r} {want[1][len(got[1]):]!r}"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(flt=filters(), sort=sorts, projection=projections, skip=st.integers(0, 3), limit=st.integers(0, 5))
@example(flt={"x": {"$gt": 2}}, sort=[("x", -1)], projection=None, skip=0, limit=3)
def test_the_proxy_answers_as_the_backend_does_on_plaintext(twins, flt, sort, projection, skip, limit):
    enc, plain = twins
    if not sort:
        skip, limit = 0, 0  # without a sort, which documents a skip or limit leaves is not defined
    want = answer(plain, flt, sort, projection, skip, limit)
    if want[0] == "error":
        return  # the backend itself refuses it (a malformed generated query): nothing to compare
    got = answer(enc, flt, sort, projection, skip, limit)
    TALLY["compared"] += 1
    if got[0] == "error" and got[1] in (9720010, 9720011):
        TALLY["refused"] += 1
        return  # refused by the proxy (what neither side can evaluate): refused, never wrong
    if os.environ.get("FLE_DIFF_EXPLORE") and got != want:
        with open(os.environ["FLE_DIFF_EXPLORE"], "a") as f:
            f.write(f"{(flt, sort, projection, skip, limit)!r}\n    {first_difference(got, want)}\n")

        return
    assert got == want, first_difference(got, want)
    n_want = plain.database.command("count", plain.name, query=flt)["n"]
    assert enc.database.command("count", enc.name, query=flt)["n"] == n_want
    if not sort and not projection:
        for key in ("s", "y", "sub.w"):
            assert enc.distinct(key, flt) == plain.distinct(key, flt), key


def test_the_generated_queries_were_mostly_answered_not_refused():
    assert TALLY["compared"] > 0
    assert TALLY["refused"] <= TALLY["compared"] * 0.05, TALLY


UPDATE_EXAMPLES = max(50, EXAMPLES // 3)
# int32 arguments: where a sum or product changes a value's type (0 × 2.5 = 0.0), MongoDB writes
# and counts it, the backend does not; the evaluator's unit tests hold the proxy to the server's
# promotion rules
numbers = st.sampled_from([1, -2, 3, 0])
updates = st.one_of(
    st.tuples(st.sampled_from(["$inc", "$mul"]), st.sampled_from(["x", "s", "sub.w", "n"]), numbers),
    st.tuples(st.sampled_from(["$min", "$max", "$set"]), st.sampled_from(["x", "s", "sub.w", "n"]), scalars),
).map(lambda t: {t[0]: {t[1]: t[2]}})


def arithmetic_targets_not_null(docs):
    """$inc/$mul of a null field: MongoDB fails (TypeMismatch), mongo-java-server takes the null
    for 0; the fields the generated arithmetic targets hold no null (the proxy follows MongoDB)."""
    for d in docs:
        for field in ("x", "s", "n"):
            if field in d and d[field] is None:
                d[field] = 0
        if isinstance(d.get("sub"), dict) and d["sub"].get("w", 1) is None:
            d["sub"]["w"] = 0
    return docs


def write_outcome(coll, flt, update, multi, upsert=False):
    try:
        r = coll.update_many(flt, update, upsert=upsert) if multi else coll.update_one(flt, update, upsert=upsert)
        outcome = ("ok", r.matched_count, r.modified_count, generated(r.upserted_id))
    except OperationFailure as e:
        if e.code in (9720010, 9720011):
            return ("refused",), None
        outcome = ("error", "write failed")  # codes differ between the backend and MongoDB; the data must not
    return outcome, [dict(d, _id=generated(d["_id"])) for d in coll.find({}, sort=[("_id", 1)])]


def seeds_differently(flt) -> bool:
    """True if the backend would build an upsert's document from this filter otherwise than MongoDB:
    it takes no one-element $in and no $eq beside other operators (MongoDB takes both; docs/query-model.md)."""
    if isinstance(flt, list):
        return any(seeds_differently(v) for v in flt)
    if not isinstance(flt, dict):
        return False
    if "$in" in flt and isinstance(flt["$in"], list) and len(flt["$in"]) == 1 or "$eq" in flt and len(flt) > 1:
        return True
    return any(seeds_differently(v) for v in flt.values())


def same_number(got: dict, want: dict, field: str) -> dict:
    """got with field taken from want where both hold numbers equal by value."""
    a, b = got.get(field), want.get(field)
    numbers = (int, float, Int64, Decimal128)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool) \
            and (a.to_decimal() if isinstance(a, Decimal128) else a) == (b.to_decimal() if isinstance(b, Decimal128) else b):
        return dict(got, **{field: b})
    return got


def generated(_id):
    """An upsert's new _id, when the server made it (an ObjectId), differs between the twins."""
    return "(generated)" if isinstance(_id, ObjectId) else _id


@settings(max_examples=UPDATE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(flt=filters(), update=updates, multi=st.booleans(), upsert=st.booleans())
def test_the_proxy_writes_as_the_backend_does_on_plaintext(twins, flt, update, multi, upsert):
    assume(not (upsert and seeds_differently(flt)))
    enc, plain = twins
    wenc, wplain = enc.database.diff_writes, plain.database.diff_writes
    for coll in (wenc, wplain):
        coll.drop()
        coll.insert_many(arithmetic_targets_not_null(documents()))
    want = write_outcome(wplain, flt, update, multi, upsert)
    got = write_outcome(wenc, flt, update, multi, upsert)
    TALLY["writes"] += 1
    if got[0] == ("refused",):
        TALLY["writes refused"] += 1
        return  # refused by the proxy (a condition on a sub-document holding encrypted fields): never wrong
    if os.environ.get("FLE_DIFF_EXPLORE") and got != want:
        with open(os.environ["FLE_DIFF_EXPLORE"], "a") as f:
            f.write(f"W {(flt, update, multi, upsert)!r}\n    {got[0]} {want[0]}\n")
        return
    if "$set" in update and next(iter(update["$set"])) in ("x", "s"):
        # a $set of a randomized field writes a new envelope even when the value is the same: the
        # server counts it modified (documented under "Semantics worth knowing")
        got, want = (got[0][:2], got[1]), (want[0][:2], want[1])
        # and a number equal by value but of another type (7 over 7.0) is written, as MongoDB writes
        # it (its no-op test is binary); the backend keeps the old one (docs/query-model.md)
        field = next(iter(update["$set"]))
        got = (got[0], [same_number(g, w, field) for g, w in zip(got[1], want[1])] if got[1] else got[1])
    assert got[0] == want[0], (flt, update, multi, upsert)
    assert got[1] == want[1], first_difference(("ok", got[1]), ("ok", want[1]))


def test_the_generated_writes_were_mostly_carried_out_not_refused():
    assert TALLY["writes"] > 0
    assert TALLY["writes refused"] <= TALLY["writes"] * 0.25, TALLY


groups = st.sampled_from([
    {"_id": "$n", "c": {"$sum": 1}},
    {"_id": "$n", "t": {"$sum": "$s"}},
    {"_id": None, "mx": {"$max": "$s"}, "mn": {"$min": "$s"}},
    {"_id": "$y", "first": {"$first": "$n"}, "c": {"$sum": 1}},
    {"_id": "$y", "vals": {"$addToSet": "$n"}},  # (the backend leaves nulls out of $addToSet; MongoDB keeps them)
])


def normalized(docs):
    """$group's output order is not defined; $addToSet's element order neither."""
    out = []
    for d in docs:
        d = dict(d)
        if "vals" in d:
            d["vals"] = sorted(d["vals"], key=repr)
        out.append(d)
    return sorted(out, key=repr)


@settings(max_examples=UPDATE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(flt=filters(), group=groups)
def test_the_proxy_groups_as_the_backend_does_on_plaintext(twins, flt, group):
    compare_aggregates(*twins, [{"$match": flt}, {"$group": group}], "groups")


def compare_aggregates(enc, plain, pipeline, kind):
    """The proxy's answer to a pipeline held to the backend's on plaintext, in no order (a
    $group's is not defined): nothing to compare if the backend refuses it, and a refusal by the
    proxy counted in TALLY[kind + " refused"]."""
    try:
        want = normalized(plain.aggregate(pipeline))
    except (OperationFailure, AutoReconnect):
        return  # the backend itself refuses it
    TALLY[kind] += 1
    try:
        got = normalized(enc.aggregate(pipeline))
    except OperationFailure as e:
        assert e.code in (9720010, 9720011), e.details
        TALLY[kind + " refused"] += 1
        return
    if os.environ.get("FLE_DIFF_EXPLORE") and got != want:
        with open(os.environ["FLE_DIFF_EXPLORE"], "a") as f:
            f.write(f"{kind} {pipeline!r}\n    {got!r}\n    {want!r}\n")
        return
    assert got == want, pipeline


def test_the_generated_groups_were_mostly_answered_not_refused():
    assert TALLY["groups"] > 0
    assert TALLY["groups refused"] <= TALLY["groups"] * 0.25, TALLY


# Aggregation expressions over encrypted fields (x, y, s, arr, sub.v) and plain ones (n, sub.w): the
# proxy evaluates them on plaintext; the backend, on its plaintext twin. Only operators the
# embedded backend has are drawn (it lacks $type, $isNumber, …; where it departs from MongoDB,
# test_evaluated_queries.py and the Java tests write MongoDB's answer out).
OPERANDS = st.sampled_from(["$x", "$y", "$s", "$n", "$sub.v", "$sub.w", "$arr", "$nothere", 0, 1, 2, -3, 2.5, "a", None])


def expressions():
    def extend(inner):
        two = st.lists(inner, min_size=2, max_size=2)
        return st.one_of(
            st.builds(lambda op, a: {op: a}, st.sampled_from(["$add", "$subtract", "$multiply", "$ifNull", "$and", "$or",
                                                              "$concat", "$divide", "$mod"]), two),
            # comparisons of operands made null when missing: the backend takes a missing operand for
            # null ({$eq: ["$x", "$y"]} true with x missing and y null), MongoDB and the proxy order
            # missing below null (false); LogicAndComparisonTest holds the proxy to MongoDB's rule. (No
            # $cmp: the backend answers it with the strings' difference, 49, where MongoDB answers 1.)
            st.builds(lambda op, a: {op: [{"$ifNull": [a[0], None]}, {"$ifNull": [a[1], None]}]},
                      st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), two),
            st.builds(lambda a, b, c: {"$cond": [a, b, c]}, inner, inner, inner),
            st.builds(lambda a: {"$not": [a]}, inner),
            st.builds(lambda a: {"$abs": a}, inner),
            # (null made "" first: the backend answers $toUpper of null with null, MongoDB and the proxy with "")
            st.builds(lambda a: {"$toUpper": {"$ifNull": [a, ""]}}, inner),
            st.builds(lambda a: {"$size": {"$cond": [{"$isArray": [a]}, a, []]}}, inner),
            # (no numbers in $in's list: the backend compares them by type there, an Int64(2) not in [2];
            # MongoDB by value, as the proxy does: ArraySetDateOperatorsTest)
            st.builds(lambda a, xs: {"$in": [a, xs]}, inner, st.lists(st.sampled_from(["a", "B", None]), max_size=3)),
        )
    return st.recursive(OPERANDS, extend, max_leaves=4)


TALLY.update({"expressions": 0, "expressions refused": 0})


@settings(max_examples=UPDATE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(e=expressions(), where=st.booleans())
def test_the_proxy_evaluates_expressions_as_the_backend_does_on_plaintext(twins, e, where):
    enc, plain = twins
    pipeline = ([{"$match": {"$expr": e}}, {"$project": {"n": 1}}] if where
                else [{"$project": {"v": e}}]) + [{"$sort": {"_id": 1}}]
    try:
        want = list(plain.aggregate(pipeline))
    except (OperationFailure, AutoReconnect):
        return  # the backend fails it (as mongod would, on a string operand …) or lacks the operator
    TALLY["expressions"] += 1
    try:
        got = list(enc.aggregate(pipeline))
    except OperationFailure as err:
        assert err.code in (9720010, 9720011), err.details
        TALLY["expressions refused"] += 1
        return
    if os.environ.get("FLE_DIFF_EXPLORE") and got != want:
        with open(os.environ["FLE_DIFF_EXPLORE"], "a") as f:
            f.write(f"E {pipeline!r}\n    {got!r}\n    {want!r}\n")
        return
    assert got == want or repr(got) == repr(want), pipeline  # repr: NaN is not == itself


def test_the_generated_expressions_were_mostly_answered_not_refused():
    assert TALLY["expressions"] > 0
    assert TALLY["expressions refused"] <= TALLY["expressions"] * 0.25, TALLY


# Pipelines whose leading plain stages ($match on n, $project/$set/$unset, $unwind of the plain
# array t, $lookup of a collection outside the policy) the server runs in the candidate read, before
# a stage the proxy evaluates. The backend runs those stages for both sides, so only the proxy's
# stages are held to the backend's answer: generated as above, clear of where it departs from
# MongoDB (it also projects a path through an array otherwise, so no such path is drawn).
JOIN = [{"_id": i, "k": k, "v": i * 10} for i, k in enumerate([0, 1, 1, 2, 3.0, "1", None])] + [{"_id": 9}]
PLAIN_NAMES = ["x", "y", "s", "arr", "sub", "n", "t", "m", "j"]
PLAIN_EXPRESSIONS = st.sampled_from([{"$add": ["$n", 1]}, {"$multiply": ["$n", "$n"]}, "$sub.w", "$n", 7,
                                     {"$cond": [{"$gt": ["$n", 1]}, "big", "small"]}])
plain_stages = st.one_of(
    st.lists(st.integers(0, 3), min_size=1, max_size=3).map(lambda ns: {"$match": {"n": {"$in": ns}}}),
    st.tuples(st.lists(st.sampled_from(PLAIN_NAMES), min_size=1, max_size=3, unique=True), st.booleans(),
              PLAIN_EXPRESSIONS).map(
        lambda t: {"$project": {**{name: 1 for name in t[0]}, **({"m": t[2]} if t[1] and "m" not in t[0] else {})}}),
    st.lists(st.sampled_from(PLAIN_NAMES), min_size=1, max_size=3, unique=True).map(
        lambda names: {"$project": {name: 0 for name in names}}),
    # (no $set: where the whole pipeline is plain it goes to the backend as it is, which knows only
    # $addFields; the proxy sends an evaluated pipeline's $set as $addFields, test_evaluated_prefix.py)
    PLAIN_EXPRESSIONS.map(lambda e: {"$addFields": {"m": e}}),
    st.lists(st.sampled_from(PLAIN_NAMES), min_size=1, max_size=2, unique=True).map(lambda names: {"$unset": names}),
    st.just({"$unwind": "$t"}),
    st.booleans().map(lambda keep: {"$unwind": {"path": "$t", "includeArrayIndex": "i",
                                                "preserveNullAndEmptyArrays": keep}}),
    st.just({"$lookup": {"from": "diff_join", "localField": "n", "foreignField": "k", "as": "j"}}),
    st.just({"$unwind": "$j"}),
)
evaluated_stages = st.one_of(filters().map(lambda f: {"$match": f}), groups.map(lambda g: {"$group": g}),
                             st.just({"$sort": {"s": -1}}))


@pytest.fixture(scope="module")
def joins(twins):
    for coll in twins:
        coll.database.diff_join.drop()
        coll.database.diff_join.insert_many(JOIN)
    return twins


TALLY.update({"prefixes": 0, "prefixes refused": 0})


@settings(max_examples=UPDATE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(prefix=st.lists(plain_stages, min_size=1, max_size=4), tail=st.lists(evaluated_stages, min_size=1, max_size=2))
@example(prefix=[{"$lookup": {"from": "diff_join", "localField": "n", "foreignField": "k", "as": "j"}},
                 {"$unwind": "$t"}, {"$project": {"x": 1, "j": 1, "t": 1}}],
         tail=[{"$match": {"x": {"$gt": 1}}}])
def test_the_proxy_answers_after_the_servers_plain_stages_as_the_backend_does(joins, prefix, tail):
    compare_aggregates(*joins, prefix + tail, "prefixes")


def test_the_generated_prefixes_were_mostly_answered_not_refused():
    assert TALLY["prefixes"] > 0
    assert TALLY["prefixes refused"] <= TALLY["prefixes"] * 0.25, TALLY
