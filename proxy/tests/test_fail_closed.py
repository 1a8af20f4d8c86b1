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
    assert e.value.code == code, e.value.details
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
    pipeline = [{"$project": {"x": {"$setField": {"field": {"$literal": "$a"}, "input": "$name", "value": 1}}}}]
    try:
        list(hr.people.aggregate(pipeline))
    except OperationFailure as e:  # the embedded backend may not know $setField: its error, not the proxy's
        assert e.code not in (9720010, 9720011), e.details
