"""pymongo against the real embedded backend, directly and through the real proxy."""
import threading

from bson import Binary, Decimal128, Int64, ObjectId, Regex
from bson.timestamp import Timestamp
from pymongo import (ASCENDING, DeleteOne, InsertOne, ReplaceOne,
                     ReturnDocument, UpdateOne)

from conftest import client


def scenario(db):
    """Everyday operations; returns what they observed, in order."""
    seen = []
    people = db.people
    people.drop()
    people.insert_one({"_id": 1, "name": "Ada", "age": 36, "tags": ["math", "engines"],
                       "address": {"city": "London"}, "i64": Int64(2**40), "dec": Decimal128("1.10"),
                       "oid": ObjectId("0123456789abcdef01234567"), "bin": Binary(b"\x00\x01\xff"),
                       "re": Regex("^a", "i"), "ts": Timestamp(1, 2), "none": None, "f": 2.5, "ok": True})
    seen.append(len(people.insert_many([{"_id": i, "name": f"n{i}", "age": 20 + i} for i in range(2, 6)]).inserted_ids))
    seen.append(list(people.find({"age": {"$gte": 23}}).sort("_id", ASCENDING)))
    seen.append(people.find_one({"_id": 1}, {"name": 1}))
    seen.append(people.update_one({"_id": 2}, {"$set": {"age": 99}}).modified_count)
    seen.append(people.update_many({"age": {"$lt": 30}}, {"$inc": {"age": 1}}).modified_count)
    seen.append(people.update_one({"_id": 9}, {"$set": {"name": "up"}}, upsert=True).upserted_id)
    seen.append(people.replace_one({"_id": 3}, {"name": "replaced"}).modified_count)
    seen.append(people.find_one_and_update({"_id": 4}, {"$set": {"age": 1}}, return_document=ReturnDocument.AFTER))
    seen.append(people.delete_one({"_id": 9}).deleted_count)
    seen.append(people.count_documents({}))
    seen.append(sorted(people.distinct("name")))
    seen.append(list(people.aggregate([{"$match": {"age": {"$gt": 0}}},
                                       {"$group": {"_id": None, "total": {"$sum": "$age"}}}])))
    seen.append(list(people.find().sort("_id", ASCENDING)))
    return seen


def test_handshake_shows_one_standalone_endpoint(proxy, proxy_client):
    assert proxy_client.admin.command("ping")["ok"] == 1.0
    description = proxy_client.topology_description
    servers = description.server_descriptions()
    assert list(servers) == [("127.0.0.1", proxy.port)]
    assert servers[("127.0.0.1", proxy.port)].server_type_name == "Standalone"
    assert proxy_client.admin.command("isMaster")["maxWireVersion"] >= 9


def test_same_script_gives_identical_results_direct_and_through_proxy(direct_client, proxy_client):
    via_direct = scenario(direct_client.same_direct)
    via_proxy = scenario(proxy_client.same_proxy)
    assert via_direct == via_proxy
    assert via_proxy[0] == 4


def test_get_more_with_batch_size_two_over_a_thousand_documents(proxy_client):
    c = proxy_client.cursors.thousand
    c.drop()
    c.insert_many([{"_id": i, "v": f"value {i}"} for i in range(1000)])
    ids = [d["_id"] for d in c.find().sort("_id", ASCENDING).batch_size(2)]
    assert ids == list(range(1000))


# Exhaust cursors are tested in ExhaustBackpressureTest (Java) against a scripted upstream: the
# embedded backend closes the connection on OP_MSG's exhaustAllowed flag ("flags=65536 not yet
# supported"), directly as well as through the proxy.


def test_aggregate(proxy_client):
    c = proxy_client.agg.sales
    c.drop()
    c.insert_many([{"item": "a", "qty": 2}, {"item": "b", "qty": 5}, {"item": "a", "qty": 3}])
    out = list(c.aggregate([{"$match": {"qty": {"$gt": 1}}},
                            {"$group": {"_id": "$item", "total": {"$sum": "$qty"}}},
                            {"$sort": {"_id": 1}}]))
    assert out == [{"_id": "a", "total": 5}, {"_id": "b", "total": 5}]


def test_ordered_and_unordered_bulk_writes(proxy_client):
    c = proxy_client.bulk.items
    c.drop()
    r = c.bulk_write([InsertOne({"_id": 1, "n": 1}), InsertOne({"_id": 2, "n": 2}),
                      UpdateOne({"_id": 1}, {"$set": {"n": 10}}), ReplaceOne({"_id": 2}, {"n": 20}),
                      DeleteOne({"_id": 1})])
    assert (r.inserted_count, r.modified_count, r.deleted_count) == (2, 2, 1)
    r = c.bulk_write([InsertOne({"_id": 3}), InsertOne({"_id": 4})], ordered=False)
    assert r.inserted_count == 2
    assert list(c.find().sort("_id", 1)) == [{"_id": 2, "n": 20}, {"_id": 3}, {"_id": 4}]


def test_a_sixteen_megabyte_document(proxy_client):
    c = proxy_client.big.docs
    c.drop()
    big = "x" * (16 * 1024 * 1024 - 1024)
    c.insert_one({"_id": 1, "s": big})
    assert c.find_one({"_id": 1})["s"] == big


def test_a_hundred_concurrent_connections(proxy):
    n = 100
    with client(proxy.uri(), maxPoolSize=n, minPoolSize=n) as many:
        c = many.concurrency.c
        c.drop()
        barrier = threading.Barrier(n)
        results, errors = [None] * n, []

        def work(i):
            try:
                barrier.wait(30)
                c.insert_one({"_id": i, "thread": f"t{i}"})
                results[i] = c.find_one({"_id": i})["thread"]
            except Exception as e:  # reported below with the thread's index
                errors.append((i, repr(e)))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert results == [f"t{i}" for i in range(n)]
        assert c.count_documents({}) == n
