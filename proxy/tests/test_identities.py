"""Who may read what (docs/access.md): identities from client certificates and from SCRAM
conversations the server confirmed, and the per-field reveal / mask / deny, query and write rules,
through the real proxy. Certificates come from one test CA; the server that authenticates is
scram_server.py (SCRAM-SHA-256 with scramp) in front of the embedded backend."""
import os

import pytest
from bson import Binary
from pymongo import ASCENDING
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client
from pki import Pki
from scram_server import ScramServer

SSN = "123-45-6789"


@pytest.fixture(scope="module")
def pki(workdir):
    ca = Pki(workdir / "pki-identities", "identities CA")
    ca.issue("proxy", "proxy", names=["127.0.0.1", "localhost"])
    ca.issue("payments", "payments", client=True)
    ca.issue("support", "support-desk", client=True, uris=["spiffe://example.org/support"])
    ca.issue("payments-space", "payments ", client=True)  # the same letters and a trailing space
    ca.issue("payments-upper", "PAYMENTS", client=True)
    return ca


def policy(kms, extra_fields=""):
    key = kms.keys["AES-256"]
    return (f"  acc.people:\n    key: {key}\n    fields:\n"
            f"      ssn: {{ reveal: [payments, batch], mask: partial, keep: 4, deny: [anonymous] }}\n"
            f"      card: {{ reveal: [payments], mask: pseudonym, query: [payments, support] }}\n"
            f"      salary: {{ reveal: [payments], mask: redact, write: [payments] }}\n" + extra_fields
            # deterministic: write defaults to who may query it (payments)
            + f"  acc.staff:\n    key: {key}\n    fields:\n"
            f"      tax: {{ deterministic: true, reveal: [payments], mask: partial, keep: 2 }}\n")


class IdentityProxy(EncryptingProxy):
    """An encrypting proxy with a TLS listener (client certificates optional) and identities."""

    def __init__(self, tmp, upstream_port, kms, collections, ca, name):
        self.ca = ca
        super().__init__(tmp, upstream_port, kms, collections, name=name, admin=True)

    def write(self, collections):
        super().write(collections)
        text = self.config.read_text()
        self.config.write_text(
            f"tls:\n  cert: {self.ca.dir}/proxy.pem\n  key: {self.ca.dir}/proxy.key\n"
            f"  clientCA: {self.ca.ca_file}\n  clientAuth: optional\n"
            "identities:\n"
            "  payments: { subject: \"CN=payments\" }\n"
            "  support: { uri: \"spiffe://example.org/support\" }\n"
            "  batch: { user: \"etl@admin\" }\n" + text)


def connect(proxy, ca, cert=None, **kw):
    extra = {"tlsCertificateKeyFile": str(ca.dir / f"{cert}.both.pem")} if cert else {}
    return client(proxy.uri(), tls=True, tlsCAFile=str(ca.ca_file), **extra, **kw)


@pytest.fixture(scope="module")
def scram_server(backend):
    s = ScramServer(backend.port, {("admin", "etl"): "etl-secret", ("admin", "app"): "app-secret"})
    yield s
    s.close()


@pytest.fixture(scope="module")
def proxy(workdir, scram_server, kms, pki):
    p = IdentityProxy(workdir, scram_server.port, kms, policy(kms), pki, name="proxy-identities").start()
    yield p
    p.stop()


def as_user(proxy, ca, user, password, **kw):
    return connect(proxy, ca, username=user, password=password, authSource="admin",
                   authMechanism="SCRAM-SHA-256", **kw)


@pytest.fixture(scope="module")
def people(proxy, pki):
    with as_user(proxy, pki, "etl", "etl-secret", tlsCertificateKeyFile=str(pki.dir / "payments.both.pem")) as c:
        c.acc.people.drop()
        c.acc.people.insert_many([{"_id": 1, "name": "ann", "ssn": SSN, "card": "4111-1111-1111-1111", "salary": 100},
                                  {"_id": 2, "name": "bob", "ssn": "987-65-4321", "card": "4111-1111-1111-1111",
                                   "salary": 200}])
    return proxy


def test_payments_sees_plaintext_support_the_masks(people, pki):
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "payments.both.pem")) as pay:
        docs = list(pay.acc.people.find({}, sort=[("_id", ASCENDING)]))
        assert docs[0]["ssn"] == SSN and docs[0]["salary"] == 100 and docs[0]["card"] == "4111-1111-1111-1111"
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        docs = list(sup.acc.people.find({}, sort=[("_id", ASCENDING)]))
        assert [d["ssn"] for d in docs] == ["***-**-6789", "***-**-4321"]
        assert docs[0]["salary"] is None and docs[0]["name"] == "ann"
        # the same card, the same pseudonym; nothing of the number in it
        assert docs[0]["card"] == docs[1]["card"] and docs[0]["card"].startswith("pn1:") and "4111" not in docs[0]["card"]


def test_anonymous_is_refused_the_denied_field_and_may_leave_it_out(people, pki):
    with as_user(people, pki, "app", "app-secret") as anon:
        with pytest.raises(OperationFailure) as e:
            list(anon.acc.people.find({}))
        assert e.value.code == 9720040 and "ssn" in str(e.value) and "anonymous" in str(e.value)
        assert SSN not in str(e.value.details)
        got = list(anon.acc.people.find({}, {"ssn": 0}, sort=[("_id", ASCENDING)]))
        assert got[0]["name"] == "ann" and "ssn" not in got[0] and got[0]["salary"] is None


def test_query_and_write_rules(people, pki):
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        with pytest.raises(OperationFailure) as e:
            list(sup.acc.people.find({"ssn": SSN}, {"ssn": 0}))  # would learn the plaintext by search
        assert e.value.code == 9720040 and "support" in str(e.value)
        with pytest.raises(OperationFailure) as e:
            list(sup.acc.people.find({}, {"ssn": 0}).sort("ssn", 1))
        assert e.value.code == 9720040
        # card may be queried by support (query: [payments, support]); its answer is still masked
        # (evaluated by the proxy, in batches of one: the second from the cursor it holds for support)
        got = list(sup.acc.people.find({"card": {"$regex": "^4111"}}, {"ssn": 0}).batch_size(1))
        assert len(got) == 2 and all(d["card"].startswith("pn1:") for d in got)
        assert all(d["salary"] is None for d in got)
        with pytest.raises(OperationFailure) as e:
            sup.acc.people.update_one({"_id": 1}, {"$set": {"salary": 1}})
        assert e.value.code == 9720040 and "salary" in str(e.value)
        sup.acc.people.update_one({"_id": 1}, {"$set": {"name": "ann2"}})  # other fields: as before


def test_identity_comes_from_a_confirmed_scram_conversation_only(people, pki):
    # etl@admin is the batch identity: reveals ssn, but salary (reveal: [payments]) stays redacted
    with as_user(people, pki, "etl", "etl-secret") as etl:
        d = etl.acc.people.find_one({"_id": 2})
        assert d["ssn"] == "987-65-4321" and d["salary"] is None
    # on one raw connection: a confirmed conversation makes it batch; a failed one after it (which
    # leaves the server's earlier authentication in force, as mongod does) leaves it no identity
    with raw_connection(people, pki) as s:
        assert authenticate(s, "etl", "etl-secret")["done"] is True
        assert command(s, {"find": "people", "filter": {"_id": 2}, "$db": "acc"})["cursor"]["firstBatch"][0]["ssn"] \
            == "987-65-4321"
        assert command(s, {"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": b"n,,n=etl,r=claimed",
                           "$db": "admin"}).get("ok") == 1  # a claim, never confirmed: no identity from it
        failed = authenticate(s, "etl", "wrong")
        assert failed["ok"] == 0 and failed["code"] == 18
        denied = command(s, {"find": "people", "filter": {"_id": 2}, "$db": "acc"})
        assert denied["code"] == 9720040 and "anonymous" in denied["errmsg"]


def raw_connection(proxy, ca, cert=None):
    import socket
    import ssl
    ctx = ssl.create_default_context(cafile=str(ca.ca_file))
    if cert:
        ctx.load_cert_chain(str(ca.dir / f"{cert}.both.pem"))
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", proxy.port)), server_hostname="localhost")


def command(sock, body):
    import bson
    import wire
    command.request_id = getattr(command, "request_id", 100) + 1
    sock.sendall(wire.op_msg(body, request_id=command.request_id))
    _, payload = wire.read_reply(sock)
    return bson.decode(payload[5:])


def authenticate(sock, user, password):
    from bson.binary import Binary
    from scramp import ScramClient
    c = ScramClient(["SCRAM-SHA-256"], user, password)
    first = command(sock, {"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": Binary(c.get_client_first().encode()),
                           "options": {"skipEmptyExchange": True}, "$db": "admin"})
    c.set_server_first(bytes(first["payload"]).decode())
    return command(sock, {"saslContinue": 1, "conversationId": first["conversationId"],
                          "payload": Binary(c.get_client_final().encode()), "$db": "admin"})


def test_x509_authentication_is_refused_with_a_clear_error(people, pki):
    c = connect(people, pki, "payments", authMechanism="MONGODB-X509", serverSelectionTimeoutMS=3000)
    with pytest.raises(OperationFailure) as e:
        c.admin.command("ping")
    assert e.value.code == 9720041 and "X509" in str(e.value)
    c.close()


def test_requests_and_fields_are_counted_by_identity(people, pki):
    import urllib.request
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        sup.acc.people.find_one({"_id": 1}, {"ssn": 0})
    text = urllib.request.urlopen(f"http://127.0.0.1:{people.admin_port}/metrics", timeout=10).read().decode()
    assert 'fleproxy_identity_requests_total{identity="support"}' in text
    assert 'fleproxy_identity_fields_total{identity="support",outcome="masked:partial"}' in text
    assert 'fleproxy_identity_fields_total{identity="payments",outcome="revealed"}' in text


def test_cursors_belong_to_who_opened_them(people, pki):
    """A server cursor opened by payments is not support's to read, kill, or name from another
    collection; nor is the cursor the proxy holds for support payments' (issue 40)."""
    with raw_connection(people, pki, "payments") as pay, raw_connection(people, pki, "support") as sup:
        assert authenticate(pay, "app", "app-secret")["done"] and authenticate(sup, "app", "app-secret")["done"]
        opened = command(pay, {"find": "people", "filter": {}, "projection": {"ssn": 1}, "batchSize": 1,
                               "$db": "acc"})
        cursor = opened["cursor"]["id"]
        assert cursor != 0
        for probe in ({"getMore": cursor, "collection": "people", "$db": "acc"},
                      {"getMore": cursor, "collection": "other", "$db": "acc"},
                      {"killCursors": "people", "cursors": [cursor], "$db": "acc"},
                      {"killCursors": "other", "cursors": [cursor], "$db": "acc"}):
            got = command(sup, probe)
            assert got["ok"] == 0 and got["code"] == 13 and "cursor" in got["errmsg"], (probe, got)
            assert "987-65-4321" not in str(got) and "6789" not in str(got)
        other_session = {"id": Binary(os.urandom(16), 4)}
        in_session = command(pay, {"getMore": cursor, "collection": "people", "batchSize": 1, "lsid": other_session,
                                   "$db": "acc"})
        assert in_session["code"] == 13 and "session" in in_session["errmsg"]
        # its owner still reads it, in the session it was opened in (none here)
        more = command(pay, {"getMore": cursor, "collection": "people", "batchSize": 1, "$db": "acc"})
        assert more["ok"] == 1 and more["cursor"]["nextBatch"][0]["ssn"] == "987-65-4321", more
        # the proxy's own cursor (an evaluated query's answer) is support's alone
        held = command(sup, {"find": "people", "filter": {"card": {"$regex": "^4111"}}, "projection": {"ssn": 0},
                             "batchSize": 1, "$db": "acc"})
        assert held["cursor"]["id"] != 0
        stolen = command(pay, {"getMore": held["cursor"]["id"], "collection": "people", "batchSize": 1, "$db": "acc"})
        assert stolen["ok"] == 0 and stolen["code"] == 43


def test_answers_that_would_compare_stored_values_are_refused(people, pki):
    """support may write ssn but not query it: no update, index or validator whose outcome depends
    on the stored value (issue 40: $max/$min gave an order oracle, a unique index an equality one)."""
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        people_ = sup.acc.people
        for update in ({"$max": {"ssn": "4"}}, {"$min": {"ssn": "6"}}, {"$addToSet": {"ssn": "x"}},
                       {"$inc": {"ssn": 0}},
                       [{"$set": {"name": {"$cond": [{"$eq": ["$ssn", "x"]}, "a", "b"]}}}]):
            with pytest.raises(OperationFailure) as e:
                people_.update_one({"_id": 1}, update)
            assert e.value.code == 9720040 and "ssn" in str(e.value), update
        with pytest.raises(OperationFailure) as e:
            people_.create_index([("ssn", 1)], unique=True)
        assert e.value.code == 9720040
        with pytest.raises(OperationFailure) as e:
            people_.create_index([("$**", 1)])
        assert e.value.code == 9720040
        with pytest.raises(OperationFailure) as e:
            sup.acc.command({"collMod": "people", "validator": {"ssn": {"$exists": True}}})
        assert e.value.code == 9720040
        for _ in range(2):  # a randomized field: a new envelope each time, so the answer says nothing of what was stored
            assert people_.update_one({"_id": 1}, {"$set": {"ssn": SSN}}).modified_count == 1
        # a deterministic field: a write's nModified would say whether the value was stored already
        with pytest.raises(OperationFailure) as e:
            sup.acc.staff.update_one({"_id": 1}, {"$set": {"tax": "111"}})
        assert e.value.code == 9720040 and "tax" in str(e.value)
        with pytest.raises(OperationFailure) as e:
            sup.acc.staff.insert_one({"_id": 9, "tax": "111"})
        assert e.value.code == 9720040


def test_a_hint_counts_as_a_query_of_the_fields_of_its_index(people, pki):
    """A hint chooses the index the server reads, so the order of what it finds (on a deterministic
    field, the documents holding one value next to each other) and, sparse or partial, which: its
    key pattern's fields count as queried, a name needs every field (but _id_)."""
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        people_ = sup.acc.people
        for hint in ({"ssn": 1}, {"name": 1, "ssn": -1}, "ssn_1", "name_1"):
            for call in (lambda: list(people_.find({}, {"ssn": 0}, hint=hint)),
                         lambda: people_.count_documents({}, hint=hint),
                         lambda: people_.update_one({"_id": 1}, {"$set": {"name": "ann"}}, hint=hint),
                         lambda: people_.delete_one({"_id": 99}, hint=hint),
                         lambda: people_.find_one_and_update({"_id": 1}, {"$set": {"name": "ann"}}, hint=hint,
                                                             projection={"ssn": 0})):
                with pytest.raises(OperationFailure) as e:
                    call()
                # a hint by name needs every field: the refusal may name another one support may not query
                named = "ssn" if isinstance(hint, dict) else ""
                assert e.value.code == 9720040 and named in str(e.value) and "support" in str(e.value), hint
        for hint in ({"card": 1}, {"_id": 1}, "_id_", {"$natural": 1}):  # support may query card
            assert len(list(people_.find({}, {"ssn": 0}, hint=hint))) == 2
            assert people_.update_one({"_id": 1}, {"$set": {"name": "ann"}}, hint=hint).matched_count == 1


def test_duplicate_key_answers_carry_no_value(people, pki, direct_client):
    from pymongo.errors import DuplicateKeyError
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "payments.both.pem")) as pay:
        staff = pay.acc.staff
        staff.drop()
        staff.create_index([("tax", 1)], unique=True)
        staff.insert_one({"_id": 1, "tax": "111-22"})
        with pytest.raises(DuplicateKeyError) as e:
            staff.insert_one({"_id": 2, "tax": "111-22"})
        details = e.value.details
        error = details["writeErrors"][0] if "writeErrors" in details else details
        assert error["code"] == 11000 and "dup key: {" not in error["errmsg"], error
        assert "tax" not in error.get("keyValue", {}), error
        raw = str(details)
        assert "111-22" not in raw and "Binary" not in raw and "BinData" not in raw, raw
        envelope = bytes(direct_client.acc.staff.find_one({"_id": 1})["tax"])
        assert envelope.hex() not in raw and __import__("base64").b64encode(envelope).decode() not in raw


def test_subject_is_compared_byte_for_byte(people, pki):
    """CN=payments with a trailing space, or in capitals, is not payments (docs/access.md)."""
    for cert in ("payments-space", "payments-upper"):
        with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / f"{cert}.both.pem")) as c:
            with pytest.raises(OperationFailure) as e:
                c.acc.people.find_one({"_id": 1})
            assert e.value.code == 9720040 and "anonymous" in str(e.value), cert


def test_logout_clears_the_identity(people, pki):
    with raw_connection(people, pki) as s:
        assert authenticate(s, "etl", "etl-secret")["done"] is True
        first = command(s, {"find": "people", "filter": {"_id": 2}, "$db": "acc"})
        assert first["cursor"]["firstBatch"][0]["ssn"] == "987-65-4321"
        command(s, {"logout": 1, "$db": "admin"})
        after = command(s, {"find": "people", "filter": {"_id": 2}, "$db": "acc"})
        assert after["code"] == 9720040 and "anonymous" in after["errmsg"]
