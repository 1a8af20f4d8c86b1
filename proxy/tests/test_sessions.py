"""Sessions and transactions pass the proxy intact (issue 30): pymongo, through the proxy, against a
stand-in mongos that accepts them (session_server.py, in front of the embedded backend). For every
command the proxy rewrites on an encrypted collection, the session and transaction fields (lsid,
txnNumber, autocommit, startTransaction), readConcern (with afterClusterTime), writeConcern,
$readPreference and $clusterTime reach the server byte for byte as the driver sent them, while
the policy fields are sealed; a transaction commits and another aborts through the proxy."""
import bson
import pytest
from pymongo import ReturnDocument
from bson.binary import Binary
from pymongo.errors import OperationFailure
from pymongo import monitoring
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import SecondaryPreferred
from pymongo.write_concern import WriteConcern

from conftest import EncryptingProxy, client
from session_server import ANSWERED, SESSION_FIELDS, SessionServer


class Sent(monitoring.CommandListener):
    """The commands as the driver sent them."""

    def __init__(self):
        self.commands = []

    def started(self, event):
        if event.command_name not in ("hello", "ismaster", "isMaster"):
            self.commands.append((event.command_name, event.command))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.fixture(scope="module")
def mongos(backend):
    s = SessionServer(backend.port)
    yield s
    s.close()


@pytest.fixture(scope="module")
def proxy(workdir, mongos, kms):
    policy = (f"  bank.accounts:\n    key: {kms.keys['AES-256']}\n    fields:\n"
              "      ssn: { deterministic: true }\n      balance: {}\n")
    p = EncryptingProxy(workdir, mongos.port, kms, policy, name="proxy-sessions").start()
    yield p
    p.stop()


@pytest.fixture()
def sent(proxy, mongos):
    listener = Sent()
    c = client(proxy.uri(), event_listeners=[listener])
    c.bank.accounts.drop()
    mongos.clear()
    listener.commands.clear()
    yield c, listener
    c.close()


def field_bytes(doc, name):
    return bson.encode({name: doc[name]}) if name in doc else None


def five_accounts(sent, mongos):
    """Five accounts inserted, then what the driver and the stand-in saw of it forgotten."""
    c, listener = sent
    c.bank.accounts.insert_many([{"_id": i, "ssn": f"000-00-000{i}", "balance": i} for i in range(5)])
    mongos.clear()
    listener.commands.clear()
    return c, listener


def assert_passed_intact(listener, mongos, expected_names):
    sent = [(n, c) for n, c in listener.commands if n != "endSessions"]
    received = [(n, raw) for n, raw, _ in mongos.commands() if n != "endSessions"]
    assert [n for n, _ in sent] == [n for n, _ in received] == expected_names
    for (name, cmd), (_, raw) in zip(sent, received):
        for f in SESSION_FIELDS:
            assert field_bytes(raw, f) == field_bytes(cmd, f), f"{name}: {f} changed on the way"
    return received


def test_a_committed_transaction_reaches_the_server_with_every_session_field(sent, mongos):
    c, listener = sent
    accounts = c.bank.accounts
    with c.start_session() as s:
        accounts.insert_one({"_id": 1, "ssn": "123-45-6789", "balance": 10}, session=s)
        assert accounts.find_one({"ssn": "123-45-6789"}, session=s)["balance"] == 10  # afterClusterTime now
        with s.start_transaction(read_concern=ReadConcern("snapshot"), write_concern=WriteConcern("majority")):
            accounts.update_one({"ssn": "123-45-6789"}, {"$set": {"balance": 20}}, session=s)
            accounts.insert_one({"_id": 2, "ssn": "987-65-4321", "balance": 5}, session=s)
            assert accounts.find_one({"_id": 1}, session=s)["balance"] == 20
            assert accounts.find_one_and_update({"ssn": "987-65-4321"}, {"$set": {"balance": 6}}, session=s)["_id"] == 2
            assert accounts.count_documents({"ssn": "987-65-4321"}, session=s) == 1
        accounts.with_options(read_preference=SecondaryPreferred()).find_one({"ssn": "987-65-4321"}, session=s)
    received = assert_passed_intact(listener, mongos,
                                    ["insert", "find", "update", "insert", "find", "findAndModify", "aggregate",
                                     "commitTransaction", "find"])
    names_and_fields = {(n, f) for n, raw in received for f in SESSION_FIELDS if f in raw}
    for expected in [("insert", "lsid"), ("find", "readConcern"), ("update", "txnNumber"), ("update", "startTransaction"),
                     ("update", "autocommit"), ("insert", "txnNumber"), ("commitTransaction", "writeConcern"),
                     ("find", "$readPreference"), ("find", "$clusterTime")]:
        assert expected in names_and_fields, f"the driver did not send {expected}: the test would prove nothing"
    assert received[1][1]["readConcern"]["afterClusterTime"] is not None
    # and the commands were rewritten all the same: sealed values, never the plaintext
    for (name, raw, seqs) in mongos.commands():
        assert b"123-45-6789" not in raw.raw and all(b"123-45-6789" not in d for _, docs in seqs for d in docs)
    inserted = [bson.decode(d) for n, _, seqs in mongos.commands() if n == "insert" for _, docs in seqs for d in docs]
    assert len(inserted) == 2 and all(isinstance(d[f], (bytes, Binary)) for d in inserted for f in ("ssn", "balance"))


def test_an_aborted_transaction_passes_its_fields_too(sent, mongos):
    c, listener = sent
    with c.start_session() as s:
        s.start_transaction()
        c.bank.accounts.insert_one({"_id": 3, "ssn": "555-55-5555", "balance": 1}, session=s)
        c.bank.accounts.delete_one({"ssn": "555-55-5555"}, session=s)
        s.abort_transaction()
    received = assert_passed_intact(listener, mongos, ["insert", "delete", "abortTransaction"])
    assert received[0][1]["startTransaction"] is True and received[2][1]["txnNumber"] == received[0][1]["txnNumber"]


def test_a_query_the_proxy_evaluates_reads_its_candidates_inside_the_transaction(sent, mongos):
    c, listener = five_accounts(sent, mongos)
    with c.start_session() as s:
        with s.start_transaction(read_concern=ReadConcern("snapshot")):
            got = list(c.bank.accounts.aggregate([{"$match": {"balance": {"$gt": 2}}}], session=s))
            assert sorted(d["_id"] for d in got) == [3, 4]
    (sent_name, sent_cmd), = [(n, cmd) for n, cmd in listener.commands if n == "aggregate"]
    (name, raw, _), = [r for r in mongos.commands() if r[0] not in ANSWERED]
    assert name == "find"  # the candidates the proxy reads to evaluate the $match itself
    for f in SESSION_FIELDS:
        assert field_bytes(raw, f) == field_bytes(sent_cmd, f), f"{f} changed between the aggregate and its candidates"
    assert raw["startTransaction"] is True and raw["readConcern"]["level"] == "snapshot"


def test_writes_the_proxy_carries_out_run_inside_the_transaction(sent, mongos):
    """Issue 41: each of the proxy's steps (candidate reads, compare-and-swap writes) carries the
    transaction's lsid, txnNumber and autocommit; the first also startTransaction and readConcern."""
    c, listener = five_accounts(sent, mongos)
    with c.start_session() as s:
        with s.start_transaction(read_concern=ReadConcern("snapshot")):
            c.bank.accounts.update_one({"_id": 1}, {"$inc": {"balance": 1}}, session=s)
            after = c.bank.accounts.find_one_and_update({"balance": {"$gt": 3}}, {"$inc": {"balance": 10}}, session=s,
                                                        return_document=ReturnDocument.AFTER)
            r = c.bank.accounts.delete_one({"balance": {"$lt": 1}}, session=s)
    steps = [(n, raw) for n, raw, _ in mongos.commands() if n not in ANSWERED]
    assert after == {"_id": 4, "ssn": "000-00-0004", "balance": 14} and r.deleted_count == 1
    assert sorted((d["_id"], d["balance"]) for d in c.bank.accounts.find()) == [(1, 2), (2, 2), (3, 3), (4, 14)]
    first = next(cmd for n, cmd in listener.commands if n == "update")
    assert [n for n, _ in steps] == ["find", "update", "find", "findAndModify", "find", "delete"]
    for i, (name, raw) in enumerate(steps):
        assert field_bytes(raw, "lsid") == field_bytes(first, "lsid"), name
        assert raw["txnNumber"] == first["txnNumber"] and raw["autocommit"] is False, name
        assert ("startTransaction" in raw) == (i == 0) and ("readConcern" in raw) == (i == 0), name
        assert "stmtIds" not in raw, "a transaction's statements are not retryable writes of their own"
    assert steps[0][1]["startTransaction"] is True and steps[0][1]["readConcern"]["level"] == "snapshot"
