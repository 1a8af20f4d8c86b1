"""Nothing of a policy field in plaintext towards the server (issue 26): every case of the second round
of attacks, run through the real proxy (real PyKMIP keys) with a recording relay between the proxy and
the embedded backend. In no case does the SSN reach the relay; each client gets the error named in the
issue. (The other findings have tests of their own: test_rewrap.py for planted values, test_tls.py for
TLS material, test_metrics.py for the admin listener, test_config_reload for duplicate keys and the
reload with the KMS frozen, test_bounds.py for maxConnections.)
"""
import socket
import struct

import bson
import pytest
from bson import Binary
from bson.son import SON
from pymongo.errors import OperationFailure

import leak_fuzz
import wire
from conftest import EncryptingProxy, client

SSN = "987-65-4321"


def policy(kms):
    return (f'  hr.people:\n'
            f'    key: {kms.keys["AES-256"]}\n'
            f'    fields:\n'
            f'      ssn: {{ deterministic: true }}\n'
            f'      address.street: {{}}\n'
            f'  hr.legacy: {{ key: {kms.keys["AES-256"]}, fields: [ssn], plaintextReads: allow }}\n')


@pytest.fixture(scope="module")
def fc_proxy(workdir, relay, kms):
    p = EncryptingProxy(workdir, relay.port, kms, policy(kms), name="proxy-failclosed").start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def hr(fc_proxy):
    c = client(fc_proxy.uri())
    yield c.hr
    c.close()


@pytest.fixture(scope="module")
def raw_hr(backend):
    c = client(f"mongodb://127.0.0.1:{backend.port}")
    yield c.hr
    c.close()


@pytest.fixture
def nothing_leaks(relay):
    """The relay's capture is cleared before the test and searched for the SSN after it."""
    relay.clear()
    yield relay
    assert SSN.encode() not in relay.captured(), "the SSN reached the server in plaintext"


def test_the_relay_sees_what_the_proxy_forwards(hr, raw_hr, nothing_leaks):
    hr.people.insert_one({"_id": "seen", "ssn": SSN, "name": "forwarded"})
    assert b"forwarded" in nothing_leaks.captured(), "a plain field passes the relay as it is"
    assert raw_hr.people.find_one({"_id": "seen"})["ssn"] != SSN
    hr.people.delete_one({"_id": "seen"})


def refused(run, code):
    with pytest.raises(OperationFailure) as e:
        run()
    assert e.value.code in (code if isinstance(code, tuple) else (code,)), e.value.details
    assert SSN not in str(e.value.details), "an error never carries the value"
    return e.value.details["errmsg"]


# ---- arguments, comments and names the proxy did not examine ----------------------------------

def test_an_unknown_argument_is_refused_by_name(hr, nothing_leaks):
    msg = refused(lambda: hr.command(SON([("find", "people"), ("filteX", {"ssn": SSN})])), 9720011)
    assert "'filteX'" in msg
    refused(lambda: hr.command(SON([("insert", "people"), ("documents", [{"ssn": SSN}]),
                                    ("bogusArg", {"ssn": SSN})])), 9720011)
    assert hr.people.count_documents({}) == 0, "nothing was written"


def test_a_comment_naming_a_policy_field_is_refused(hr, nothing_leaks):
    refused(lambda: list(hr.people.find({"_id": 1}, comment={"ssn": SSN})), 9720010)
    assert list(hr.people.find({"_id": 1}, comment="a string passes")) == []


def utf8_broken(doc: SON, marker: bytes) -> bytes:
    """The document's BSON with the 'X' of marker replaced by 0xE9: a name that is not UTF-8."""
    raw = bson.encode(doc)
    at = raw.index(marker)
    return raw[:at + marker.index(b"X")] + b"\xe9" + raw[at + marker.index(b"X") + 1:]


def send_raw(proxy, body: bytes) -> dict:
    payload = struct.pack("<I", 0) + b"\x00" + body
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
        s.sendall(wire.header(16 + len(payload), 1, 0, wire.OP_MSG) + payload)
        _, reply = wire.read_reply(s)
    return bson.decode(reply[5:])


def test_a_command_name_that_is_not_utf8_is_refused(fc_proxy, nothing_leaks):
    body = utf8_broken(SON([("fXnd", "people"), ("filter", {"ssn": SSN}), ("$db", "hr")]), b"fXnd")
    reply = send_raw(fc_proxy, body)
    assert reply["ok"] == 0 and reply["code"] == 9720011, reply


def test_a_database_named_twice_is_refused(fc_proxy, nothing_leaks):
    # the proxy would read the first $db (plain), a server keeping the last one hr
    body = bson.encode(SON([("find", "people"), ("$db", "plain"), ("filter", {"ssn": SSN})]))
    body = body[:-1] + b"\x02$db\x00" + struct.pack("<i", 3) + b"hr\x00" + b"\x00"
    body = struct.pack("<i", len(body)) + body[4:]
    reply = send_raw(fc_proxy, body)
    assert reply["ok"] == 0 and reply["code"] == 9720011, reply


@pytest.mark.parametrize("root", ["$$ROOT", "$$CURRENT"])
def test_a_lookup_variable_bound_to_the_encrypted_document_is_refused(hr, nothing_leaks, root):
    hr.people.insert_one({"_id": "lk", "ssn": "000-00-0000", "name": "x"})
    pipeline = [{"$lookup": {"from": "plain", "let": {"r": root},
                             "pipeline": [{"$match": {"$expr": {"$eq": ["$$r.ssn", SSN]}}}], "as": "j"}}]
    refused(lambda: list(hr.people.aggregate(pipeline)), 9720010)
    hr.people.delete_one({"_id": "lk"})


# ---- writes --------------------------------------------------------------------------------------

def test_an_unknown_update_operator_gets_the_servers_answer(hr, nothing_leaks):
    msg = refused(lambda: hr.people.update_one({"_id": 1}, {"$thismodifierdoesntexist": {"ssn": SSN}}), 9)
    assert "Unknown modifier: $thismodifierdoesntexist" in msg


def test_a_field_literally_named_as_a_policy_path_is_refused(hr, raw_hr, nothing_leaks):
    msg = refused(lambda: hr.people.insert_one({"_id": "dotted", "address.street": SSN}), 9720010)
    assert "address.street" in msg
    assert raw_hr.people.find_one({"_id": "dotted"}) is None


# ---- reads ---------------------------------------------------------------------------------------

def test_distinct_returns_values_in_the_servers_order(hr, nothing_leaks):
    hr.people.insert_many([{"_id": f"d{v}", "ssn": v} for v in (11, 33, 22)])
    assert hr.people.distinct("ssn", {"_id": {"$in": ["d11", "d33", "d22"]}}) == [11, 22, 33]
    hr.people.delete_many({"_id": {"$in": ["d11", "d33", "d22"]}})


def test_plaintext_reads_allow_still_fails_a_damaged_envelope(hr, raw_hr, nothing_leaks):
    hr.legacy.insert_one({"_id": "sealed", "ssn": SSN})
    envelope = bytes(raw_hr.legacy.find_one({"_id": "sealed"})["ssn"])
    planted = {
        "cut": Binary(envelope[:10], 0),
        "format": Binary(b"\x83" + envelope[1:], 0),
    }  # (subtype 6 cannot be planted here: the embedded backend closes the connection on it)
    raw_hr.legacy.insert_many([{"_id": k, "ssn": v} for k, v in planted.items()]
                              + [{"_id": "plain", "ssn": "written before the policy"}])
    for k in planted:
        refused(lambda: hr.legacy.find_one({"_id": k}), 9720021)
    assert hr.legacy.find_one({"_id": "plain"})["ssn"] == "written before the policy"
    assert hr.legacy.find_one({"_id": "sealed"})["ssn"] == SSN


def test_set_field_of_a_field_literally_named_with_a_dollar_is_not_an_encrypted_field(hr, nothing_leaks):
    hr.people.insert_one({"_id": "setfield", "ssn": "000-00-0003", "name": "n"})
    pipeline = [{"$match": {"_id": "setfield"}},
                {"$project": {"x": {"$setField": {"field": {"$literal": "$a"}, "input": {"$literal": {"b": 2}},
                                                  "value": 1}}}}]
    try:
        docs = list(hr.people.aggregate(pipeline))
    except OperationFailure as e:  # the embedded backend may not know $setField: its error, not the proxy's
        assert e.code not in (9720010, 9720011), e.details
    else:  # not refused: the answer is MongoDB's
        assert docs == [{"_id": "setfield", "x": {"b": 2, "$a": 1}}], docs
    finally:
        hr.people.delete_one({"_id": "setfield"})


# ---- issue 39: the admission gate, whole-database commands, pipeline literals ---------------------

def exchange(proxy, frame: bytes):
    """Sends one frame on a new connection: ('reply', its document) or ('closed', None) if the proxy
    closed the connection without answering; a reply followed by a close is ('reply, closed', doc)."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
        s.sendall(frame)
        try:
            (_, _, _, opcode), body = wire.read_reply(s)
        except ConnectionError:
            return "closed", None
        doc = bson.decode(body[5:]) if opcode == wire.OP_MSG else bson.decode(body[20:])
        return ("reply, closed" if wire.closed_by_peer(s) else "reply"), doc


def msg(body, sequences=()) -> bytes:
    return leak_fuzz.op_msg(bson.encode(body), [(k, [bson.encode(d) for d in docs]) for k, docs in sequences])


def refused_raw(proxy, frame, code=9720011, closes=False):
    outcome, doc = exchange(proxy, frame)
    assert outcome == ("reply, closed" if closes else "reply"), (outcome, doc)
    assert doc["ok"] == 0 and doc["code"] == code, doc
    assert SSN not in str(doc), "an error never carries the value"
    return doc["errmsg"]


def test_an_opcode_the_proxy_does_not_read_is_answered_and_closed(fc_proxy, nothing_leaks):
    op_command = b"hr\x00insert\x00" + bson.encode(SON([("insert", "people"), ("documents", [
        {"_id": 129, "ssn": SSN}])])) + bson.encode({})
    for opcode, body in [(2010, op_command), (9999, bson.encode({"ssn": SSN})),
                         (wire.OP_REPLY, struct.pack("<iqii", 0, 0, 0, 1) + bson.encode({"ssn": SSN}))]:
        frame = wire.header(16 + len(body), 3, 0, opcode) + body
        assert "is not a message the proxy reads" in refused_raw(fc_proxy, frame, closes=True)


def test_bulk_write_namespaces_given_twice_are_refused(fc_proxy, nothing_leaks):
    ops = [("ops", [{"insert": 0, "document": {"_id": 1, "ssn": SSN}}])]
    assert "given twice" in refused_raw(fc_proxy, msg(SON([("bulkWrite", 1), ("nsInfo", [{"ns": "test.x"}]),
                                                           ("$db", "admin")]), ops + [("nsInfo", [{"ns": "hr.people"}])]))
    refused_raw(fc_proxy, msg(SON([("bulkWrite", 1), ("$db", "admin")]),
                              ops + [("nsInfo", [{"ns": "test.x"}]), ("nsInfo", [{"ns": "hr.people"}])]))


def test_a_database_level_change_stream_is_refused_and_so_is_its_explain(hr, nothing_leaks):
    pipeline = [{"$changeStream": {}}, {"$match": {"fullDocument.ssn": SSN, "ns.coll": "people"}}]
    refused(lambda: hr.command(SON([("aggregate", 1), ("pipeline", pipeline), ("cursor", {})])), 9720011)
    refused(lambda: hr.command(SON([("explain", SON([("aggregate", 1), ("pipeline", pipeline), ("cursor", {})]))])),
            9720011)
    refused(lambda: hr.client.admin.command(SON([("aggregate", 1), ("pipeline", [
        {"$changeStream": {"allChangesForCluster": True}}, {"$match": {"fullDocument.ssn": SSN}}]), ("cursor", {})])),
        9720011)


@pytest.mark.parametrize("stage", [{"$set": {"ssn": SSN}}, {"$addFields": {"ssn": SSN}},
                                   {"$project": {"ssn": {"$literal": SSN}}}, {"$replaceWith": {"ssn": SSN}},
                                   {"$set": {"address": {"street": SSN}}}])
def test_a_pipeline_literal_written_into_a_policy_field_never_reaches_the_server(hr, nothing_leaks, stage):
    hr.people.insert_many([{"_id": "lit1", "ssn": "000-00-0001", "name": "a"},
                           {"_id": "lit2", "ssn": "000-00-0002", "name": "b"}])
    try:
        docs = list(hr.people.aggregate([{"$match": {"_id": {"$in": ["lit1", "lit2"]}}}, stage]))
    except OperationFailure as e:  # refused: fine, as long as it is the proxy that refused
        assert e.code in (9720010, 9720011), e.details
        assert SSN not in str(e.details)
    else:  # evaluated by the proxy: the answer is the one MongoDB would give
        assert len(docs) == 2, docs
        for d in docs:
            assert (d["address"]["street"] if "address" in stage.get("$set", {}) else d["ssn"]) == SSN, d
    finally:
        hr.people.delete_many({"_id": {"$in": ["lit1", "lit2"]}})


@pytest.mark.parametrize("db", ["HR", "Hr", "hr.", "hr\x00", "hr\x00x"])
def test_a_database_spelled_otherwise_is_refused(fc_proxy, raw_hr, nothing_leaks, db):
    body = SON([("insert", "people"), ("documents", [{"_id": "spelt", "ssn": SSN}]), ("$db", db)])
    refused_raw(fc_proxy, msg(body))
    assert "HR" not in raw_hr.client.list_database_names()


def test_over_op_query_only_the_handshake_passes(fc_proxy, nothing_leaks):
    def op_query(name, command):
        payload = struct.pack("<i", 0) + name.encode() + b"\x00" + struct.pack("<ii", 0, -1) + bson.encode(command)
        return wire.header(16 + len(payload), 4, 0, wire.OP_QUERY) + payload

    refused_raw(fc_proxy, op_query("admin.$cmd", SON([("insert", "people"), ("documents", [{"ssn": SSN}]),
                                                        ("$db", "hr")])))
    refused_raw(fc_proxy, op_query("admin.$cmd", SON([("isMaster", 1), ("$db", "hr"), ("comment", {"ssn": SSN})])))
    refused_raw(fc_proxy, op_query("hr.$cmd", SON([("delete", "people"), ("deletes", [{"q": {"ssn": SSN}}])])))
    outcome, doc = exchange(fc_proxy, op_query("admin.$cmd", SON([("isMaster", 1), ("helloOk", True)])))
    assert outcome == "reply" and doc["ok"] == 1, doc


def test_a_command_without_a_database_is_refused(fc_proxy, nothing_leaks):
    body = SON([("delete", "people"), ("deletes", [{"q": {"ssn": SSN}, "limit": 0}])])
    assert "names no database" in refused_raw(fc_proxy, msg(body))


def test_malformed_bson_outside_the_policy_closes_without_forwarding(fc_proxy, nothing_leaks):
    frame = bytearray(msg(SON([("insert", "plain"), ("documents", [{"_id": 1, "note": SSN}]), ("$db", "test")])))
    at = bytes(frame).index(SSN.encode()) - 4  # the string's length, now a lie
    frame[at:at + 4] = struct.pack("<i", 4096)
    assert exchange(fc_proxy, bytes(frame)) == ("closed", None)


@pytest.mark.parametrize("command", [
    SON([("aggregate", 1), ("pipeline", [{"$currentOp": {}}, {"$match": {"command.filter.ssn": SSN}}]), ("cursor", {})]),
    SON([("currentOp", 1), ("command.filter.ssn", SSN)]),
    SON([("listCollections", 1), ("filter", {"ssn": SSN})]),
    SON([("listCollections", 1), ("filter", {"name": "people", "$expr": {"$eq": ["$ssn", SSN]}})]),
    SON([("profile", 0), ("filter", {"command.filter.ssn": SSN})]),
    SON([("dbHash", 1), ("collections", ["people"]), ("ssn", SSN)]),
    SON([("filemd5", 1), ("root", "fs"), ("note", {"ssn": SSN})]),
    SON([("dbStats", 1), ("comment", {"address": {"street": SSN}})]),
    SON([("aggregate", 1), ("pipeline", [{"$documents": [{"ssn": SSN}]}]), ("cursor", {})]),
])
@pytest.mark.parametrize("database", ["hr", "admin"])
def test_whole_database_commands_are_examined_on_a_database_with_encrypted_collections(hr, nothing_leaks, command,
                                                                                       database):
    refused(lambda: hr.client[database].command(command), (9720010, 9720011))


@pytest.mark.parametrize("command", [
    SON([("listCollections", 1), ("filter", {"name": "people"}), ("nameOnly", True)]),
    SON([("dbStats", 1), ("comment", "a string passes")]),
    SON([("aggregate", 1), ("pipeline", [{"$currentOp": {}}, {"$match": {"op": "query"}}]), ("cursor", {})]),
])
def test_whole_database_commands_the_proxy_reads_pass(hr, command):
    try:
        hr.command(command)
    except OperationFailure as e:  # the embedded backend may not have the command: its error, not the proxy's
        assert not 9720000 <= e.code <= 9720999, e.details
