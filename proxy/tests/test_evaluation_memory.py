"""Issue 41: what evaluated queries may make the proxy hold. Candidates are read in batches that
fit in a reply (the embedded backend, unlike mongod, does not cut a batch at 16 MiB), so a large
scan ends in 9720012 on a connection that stays open; and the candidates of every query being
evaluated and the answers held as the proxy's cursors draw on one proxy-wide budget
(maxEvaluationBytes), past which a query gets 9720013 until memory is given back."""
import pytest
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client

PAD = "p" * 5_000  # documents of about 5 KB, as in the report


def policy(kms):
    key = kms.keys["AES-256"]
    return f"  enc.wide: {{ key: {key}, fields: {{ x: {{}} }} }}\n"


def start(workdir, backend, kms, name, extra=""):
    p = EncryptingProxy(workdir, backend.port, kms, policy(kms), name=name)
    p.config.write_text(p.config.read_text() + extra)
    return p.start()


@pytest.fixture(scope="module")
def wide(workdir, backend, kms):
    """10,001 documents of 5 KB with x randomized: 50 MB, one more than the default scan budget."""
    p = start(workdir, backend, kms, "proxy-memory-default")
    c = client(p.uri())
    c.enc.wide.drop()
    for start_at in range(0, 10_001, 2_000):
        c.enc.wide.insert_many([{"_id": i, "x": i, "pad": PAD} for i in range(start_at, min(start_at + 2_000, 10_001))])
    yield c.enc
    c.close()
    p.stop()


def test_a_scan_over_the_budget_of_large_documents_is_refused_on_a_connection_that_stays(wide):
    with pytest.raises(OperationFailure) as e:
        list(wide.wide.find({"x": {"$gte": 0}}, {"pad": 0}))
    assert e.value.code == 9720012, e.value.details
    # the same connection answers at once, and a scan within the budget reads its batches whole
    got = list(wide.wide.find({"_id": {"$lt": 6_000}, "x": {"$gte": 5_990}}, {"pad": 0}).sort("x", -1))
    assert [d["_id"] for d in got] == list(range(5_999, 5_989, -1))


def test_the_proxy_wide_budget_refuses_a_query_until_held_answers_are_given_back(wide, workdir, backend, kms):
    p = start(workdir, backend, kms, "proxy-memory-16mib", "maxEvaluationBytes: 16777216\n")
    try:
        c = client(p.uri())
        db = c.enc
        # 3,000 candidates of 5 KB are charged 3 x 15 MB: more than 16 MiB on their own
        with pytest.raises(OperationFailure) as e:
            list(db.wide.find({"_id": {"$lt": 3_000}, "x": {"$gte": 0}}))
        assert e.value.code == 9720013 and "maxEvaluationBytes" in str(e.value), e.value.details
        # 1,000 of them fit (about 15.4 MB charged) ...
        assert len(list(db.wide.find({"_id": {"$lt": 1_000}, "x": {"$gte": 0}}))) == 1_000
        # ... but not while another client's answer of 600 documents (3 MB) is held by the proxy
        other = client(p.uri())
        held = other.enc.wide.find({"_id": {"$lt": 600}, "x": {"$gte": 0}}).batch_size(1)
        next(held)
        with pytest.raises(OperationFailure) as e:
            list(db.wide.find({"_id": {"$lt": 1_000}, "x": {"$gte": 0}}))
        assert e.value.code == 9720013, e.value.details
        held.close()  # the held answer goes, and its memory with it
        assert len(list(db.wide.find({"_id": {"$lt": 1_000}, "x": {"$gte": 0}}))) == 1_000
        # and with the other client gone, the whole budget is there
        other.close()
        assert len(list(db.wide.find({"_id": {"$lt": 1_000}, "x": {"$gte": 0}}))) == 1_000
        c.close()
    finally:
        p.stop()
