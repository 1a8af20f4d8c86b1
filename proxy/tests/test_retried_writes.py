"""Retried writes the proxy carries out itself (issue 41, item 5), on the real proxy with pymongo
as applications use it (retryable writes on, its defaults), in front of a stand-in replica set
(replset_server.py: three members over the embedded backend, which keep retryable writes'
records as mongod's session table does):

- a member applies the proxy's write of an encrypted $inc, then drops the connection before
  answering: the proxy closes the client's connection, the driver retries, and the proxy's second
  attempt is answered from the server's record (its write carries the client's lsid, txnNumber
  and the statement's stmtId), so the counter ends exactly at the number of $inc;
- the same for statements whose retry matches nothing any more (an update that changed the field
  it filters on, a findAndModify, a delete): the proxy's probe gets the first attempt's outcome;
- a step-down just before each $inc: the proxy's own read or write meets "not primary", which it
  handles as for forwarded commands (the client's connection closed, the driver retries on the
  new primary): no error reaches the application, and each $inc is applied once.

After a network error the driver waits for a new check of the server before it retries, at most
one every 500 ms (the monitoring spec's minHeartbeatFrequencyMS); the tests lower that wait to
20 ms, so that a thousand retries take seconds. Nothing else of the driver changes.
"""
import os

import pymongo.common
import pytest
from pymongo import ReturnDocument

from conftest import EncryptingProxy, client
from replset_server import ReplicaSet

INCS = int(os.environ.get("RETRY_INCS", "1000"))
STEP_DOWNS = int(os.environ.get("RETRY_STEP_DOWNS", "1000"))


@pytest.fixture()
def cluster(workdir, backend, kms, request, monkeypatch):
    monkeypatch.setattr(pymongo.common, "MIN_HEARTBEAT_INTERVAL", 0.02)
    rs = ReplicaSet(backend.port)
    key = kms.keys["AES-256"]
    proxy = EncryptingProxy(workdir, backend.port, kms, f"  retry.counter: {{ key: {key}, fields: {{ x: {{}} }} }}\n"
                                                        f"  retry.items: {{ key: {key}, fields: {{ x: {{}} }} }}\n",
                            name=f"proxy-retry-{request.node.name[:24]}", upstream=rs.uri()).start()
    with client(f"mongodb://127.0.0.1:{backend.port}") as raw:
        raw.drop_database("retry")
    c = client(proxy.uri(), serverSelectionTimeoutMS=30_000)
    yield rs, c.retry
    c.close()
    proxy.stop()
    rs.close()


def drop_first_application(rs, collection):
    """The member drops the connection after applying each retryable write on this collection, the first time."""
    rs.writes.drop = lambda cmd: next(iter(cmd)) in ("update", "delete", "findAndModify") \
        and next(iter(cmd.values())) == collection


def test_each_inc_retried_after_a_closed_connection_is_applied_once(cluster):
    rs, db = cluster
    db.counter.insert_one({"_id": 1, "x": 0})
    drop_first_application(rs, "counter")
    for _ in range(INCS):
        db.counter.update_one({"_id": 1}, {"$inc": {"x": 1}})
    rs.writes.drop = lambda cmd: False
    assert db.counter.find_one({"_id": 1})["x"] == INCS
    assert rs.writes.dropped == INCS, "every first application was dropped"
    assert rs.writes.retried >= INCS, "and every retry answered from the record"


def test_a_retry_that_matches_nothing_any_more_gets_the_first_attempts_outcome(cluster):
    rs, db = cluster
    db.items.insert_many([{"_id": i, "x": i % 3} for i in range(9)])
    drop_first_application(rs, "items")
    # the update changes the field it filters on: its retry matches another document or none
    r = db.items.update_one({"x": 0}, {"$set": {"x": 10}})
    assert (r.matched_count, r.modified_count) == (1, 1)
    assert db.items.count_documents({"x": 10}) == 1
    # a findAndModify: the image returned is the first attempt's
    before = db.items.find_one_and_update({"x": 1}, {"$inc": {"x": 100}}, return_document=ReturnDocument.BEFORE)
    assert before["x"] == 1
    after = db.items.find_one_and_update({"x": 2}, {"$inc": {"x": 100}}, return_document=ReturnDocument.AFTER)
    assert after["x"] == 102
    removed = db.items.find_one_and_delete({"x": 0})
    assert removed["x"] == 0
    # a delete whose filter matches two more documents: one is deleted, however often retried
    r = db.items.delete_one({"x": 0})
    assert r.deleted_count == 1
    # nothing changes on the retry (a $set to the value the first attempt wrote): its counts are the first's
    r = db.items.update_one({"_id": 7, "x": {"$gte": 0}}, {"$set": {"x": 55}})
    assert (r.matched_count, r.modified_count) == (1, 1)
    rs.writes.drop = lambda cmd: False
    left = {d["_id"]: d["x"] for d in db.items.find()}
    assert left == {0: 10, 1: 101, 2: 102, 4: 1, 5: 2, 7: 55, 8: 2}, left
    assert rs.writes.dropped == 6, rs.writes.drops


def test_a_step_down_before_each_inc_reaches_no_application(cluster):
    rs, db = cluster
    db.counter.insert_one({"_id": 1, "x": 0})
    for i in range(STEP_DOWNS):
        rs.elect((i + 1) % len(rs.members), gap=0)
        db.counter.update_one({"_id": 1}, {"$inc": {"x": 1}})
    assert db.counter.find_one({"_id": 1})["x"] == STEP_DOWNS
    assert rs.not_primary > 0, "the proxy met members that were no longer primary"
